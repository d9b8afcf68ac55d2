package profile

import (
	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/symbolize"
)

// demangleFunctions gives every C++ and Rust function of a loaded profile,
// whatever its format, its readable name ([symbolize.Demangle]; a module
// prefix or offset the reader kept stays around it) and keeps the mangled
// one as the pprof system name, unless the reader set another system name.
// A name it cannot demangle stays as it is. Go, JVM and .NET names are
// rejected by a byte scan, so the pass costs little on them.
func demangleFunctions(p *pprofile.Profile) {
	for _, f := range p.Function {
		d, ok := symbolize.Demangle(f.Name)
		if !ok {
			continue
		}
		if f.SystemName == "" || f.SystemName == f.Name {
			f.SystemName = f.Name
		}
		f.Name = d
	}
}

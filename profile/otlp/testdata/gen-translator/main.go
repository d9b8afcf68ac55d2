// Command gen-translator makes the translator's OTLP test files of package
// otlp: it converts the Go profiles of testdata (cpu-base.pb.gz,
// cpu-new.pb.gz, heap.pb.gz, written by ../gen) to OpenTelemetry profiles
// with the OpenTelemetry Collector contrib translator
// github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/pprof
// (its ConvertPprofToProfiles, the conversion the Collector's pprof
// receiver uses), and writes what it returns with pdata's own marshallers,
// protobuf and JSON.
//
// The translator is not on the Go module proxy: go.mod replaces it with
// ./translator, a link to its source that the testdata README says how to
// make (it is not in the repository). This module is its own, so that
// profdiff's go.mod does not depend on the translator.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	gpprof "github.com/google/pprof/profile"
	translator "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/pprof"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

func main() {
	dir := flag.String("dir", "..", "folder that holds the pprof files and gets the OTLP files")
	flag.Parse()
	for _, name := range []string{"cpu-base", "cpu-new", "heap"} {
		if err := convert(*dir, name); err != nil {
			log.Fatalf("%s: %v", name, err)
		}
	}
}

// convert writes name.translator.otlp.pb and name.translator.otlp.json
// from name.pb.gz, and reads both back with pdata's unmarshallers.
func convert(dir, name string) error {
	data, err := os.ReadFile(filepath.Join(dir, name+".pb.gz"))
	if err != nil {
		return err
	}
	p, err := gpprof.ParseData(data)
	if err != nil {
		return err
	}
	pd, err := translate(p)
	if err != nil {
		// The translator's attribute table keys each attribute by its
		// value, and a pprof label's value is a slice, which Go cannot
		// hash: every sample label makes it panic. Without labels it
		// converts.
		fmt.Printf("%s: %v; converting it again without its sample labels\n", name, err)
		for _, s := range p.Sample {
			s.Label, s.NumLabel, s.NumUnit = nil, nil, nil
		}
		if pd, err = translate(p); err != nil {
			return err
		}
	}
	pb, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(*pd)
	if err != nil {
		return err
	}
	js, err := (&pprofile.JSONMarshaler{}).MarshalProfiles(*pd)
	if err != nil {
		return err
	}
	if _, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(pb); err != nil {
		return err
	}
	if _, err := (&pprofile.JSONUnmarshaler{}).UnmarshalProfiles(js); err != nil {
		return err
	}
	base := filepath.Join(dir, name+".translator.otlp")
	if err := os.WriteFile(base+".pb", pb, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(base+".json", js, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d pprof samples, %d sample types → %d OTLP samples, %d bytes protobuf\n",
		name, len(p.Sample), len(p.SampleType), pd.SampleCount(), len(pb))
	return nil
}

// translate runs the translator, with a panic as an error.
func translate(p *gpprof.Profile) (pd *pprofile.Profiles, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ConvertPprofToProfiles panicked: %v", r)
		}
	}()
	return translator.ConvertPprofToProfiles(p)
}

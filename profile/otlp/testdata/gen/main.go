// Command gen makes the OTLP test files of package otlp: it records Go
// CPU and heap profiles with runtime/pprof, converts each to OpenTelemetry
// profiles with the Collector's pdata/pprofile (its dictionary helpers
// SetString, SetFunction, SetLocation, SetStack, SetMapping, SetAttribute)
// and writes them with pdata's own marshallers, protobuf and JSON. The
// testdata README says how to run it.
//
// It is its own module, so that profdiff's go.mod does not depend on the
// Collector's pdata: profdiff reads OTLP with the generated messages only.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"

	gpprof "github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

func main() {
	out := flag.String("out", "..", "folder to write the profiles to")
	flag.Parse()
	runtime.MemProfileRate = 4096
	for _, side := range []struct {
		name  string
		hashN int // the work doubled on the new side
	}{{"base", 1}, {"new", 2}} {
		data := cpuProfile(side.hashN)
		write(filepath.Join(*out, "cpu-"+side.name+".pb.gz"), data)
		convert(*out, "cpu-"+side.name, data)
	}
	var heap bytes.Buffer
	keep := allocate()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(&heap, 0); err != nil {
		log.Fatal(err)
	}
	runtime.KeepAlive(keep)
	write(filepath.Join(*out, "heap.pb.gz"), heap.Bytes())
	convert(*out, "heap", heap.Bytes())
}

// cpuProfile profiles spin and hash (hash n times the work), each under a
// pprof label, and returns the gzipped profile.
func cpuProfile(n int) []byte {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	pprof.Do(ctx, pprof.Labels("worker", "spin"), func(context.Context) { spin(4e8) })
	pprof.Do(ctx, pprof.Labels("worker", "hash"), func(context.Context) { hash(n * 2e6) })
	pprof.StopCPUProfile()
	return buf.Bytes()
}

// spin and hash do a fixed amount of work, so that their CPU time does
// not depend on how busy the machine is.
//
//go:noinline
func spin(n int) {
	x := 0
	for i := range n {
		x += i * i
	}
	sink = x
}

//go:noinline
func hash(n int) {
	sum := sha256.Sum256(nil)
	for range n {
		sum = sha256.Sum256(sum[:])
	}
	sink = int(sum[0])
}

var sink int

// allocate keeps small and large allocations live for the heap profile.
//
//go:noinline
func allocate() [][]byte {
	var keep [][]byte
	for i := 0; i < 2000; i++ {
		keep = append(keep, make([]byte, 64))
	}
	for i := 0; i < 50; i++ {
		keep = append(keep, make([]byte, 64<<10))
	}
	return keep
}

func write(path string, data []byte) {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		log.Fatal(err)
	}
}

// convert writes name.otlp.pb and name.otlp.json from the pprof data.
func convert(out, name string, data []byte) {
	p, err := gpprof.Parse(bytes.NewReader(data))
	if err != nil {
		log.Fatal(err)
	}
	pd, err := toOTLP(p)
	if err != nil {
		log.Fatal(err)
	}
	pb, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		log.Fatal(err)
	}
	write(filepath.Join(out, name+".otlp.pb"), pb)
	js, err := (&pprofile.JSONMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		log.Fatal(err)
	}
	write(filepath.Join(out, name+".otlp.json"), js)
	// Both read back with pdata's unmarshallers, as a check on the files.
	if _, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(pb); err != nil {
		log.Fatal(err)
	}
	if _, err := (&pprofile.JSONUnmarshaler{}).UnmarshalProfiles(js); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d pprof samples, %d sample types → %d OTLP samples\n", name, len(p.Sample), len(p.SampleType), pd.SampleCount())
}

// toOTLP converts a pprof profile to OTLP profiles: one OTLP profile per
// pprof sample type (OTLP has one sample type per profile), all under one
// resource and scope and one dictionary; pprof labels become sample
// attributes.
func toOTLP(p *gpprof.Profile) (pprofile.Profiles, error) {
	pd := pprofile.NewProfiles()
	dict := pd.Dictionary()
	// Every table starts with its zero value.
	dict.StringTable().Append("")
	dict.MappingTable().AppendEmpty()
	dict.LocationTable().AppendEmpty()
	dict.FunctionTable().AppendEmpty()
	dict.LinkTable().AppendEmpty()
	dict.AttributeTable().AppendEmpty()
	dict.StackTable().AppendEmpty()
	str := func(s string) int32 {
		i, err := pprofile.SetString(dict.StringTable(), s)
		if err != nil {
			log.Fatal(err)
		}
		return i
	}
	must := func(i int32, err error) int32 {
		if err != nil {
			log.Fatal(err)
		}
		return i
	}
	mappings := map[uint64]int32{}
	for _, m := range p.Mapping {
		om := pprofile.NewMapping()
		om.SetMemoryStart(m.Start)
		om.SetMemoryLimit(m.Limit)
		om.SetFileOffset(m.Offset)
		om.SetFilenameStrindex(str(m.File))
		mappings[m.ID] = must(pprofile.SetMapping(dict.MappingTable(), om))
	}
	locations := map[uint64]int32{}
	for _, l := range p.Location {
		ol := pprofile.NewLocation()
		if l.Mapping != nil {
			ol.SetMappingIndex(mappings[l.Mapping.ID])
		}
		ol.SetAddress(l.Address)
		for _, ln := range l.Line {
			fn := pprofile.NewFunction()
			fn.SetNameStrindex(str(ln.Function.Name))
			fn.SetSystemNameStrindex(str(ln.Function.SystemName))
			fn.SetFilenameStrindex(str(ln.Function.Filename))
			fn.SetStartLine(ln.Function.StartLine)
			oln := ol.Lines().AppendEmpty()
			oln.SetFunctionIndex(must(pprofile.SetFunction(dict.FunctionTable(), fn)))
			oln.SetLine(ln.Line)
			oln.SetColumn(ln.Column)
		}
		locations[l.ID] = must(pprofile.SetLocation(dict.LocationTable(), ol))
	}
	rp := pd.ResourceProfiles().AppendEmpty()
	rp.Resource().Attributes().PutStr("service.name", "otlp-gen")
	sp := rp.ScopeProfiles().AppendEmpty()
	sp.Scope().SetName("profdiff-otlp-gen")
	for t, st := range p.SampleType {
		prof := sp.Profiles().AppendEmpty()
		prof.SampleType().SetTypeStrindex(str(st.Type))
		prof.SampleType().SetUnitStrindex(str(st.Unit))
		if p.PeriodType != nil {
			prof.PeriodType().SetTypeStrindex(str(p.PeriodType.Type))
			prof.PeriodType().SetUnitStrindex(str(p.PeriodType.Unit))
		}
		prof.SetPeriod(p.Period)
		prof.SetTime(pcommon.Timestamp(p.TimeNanos))
		prof.SetDurationNano(uint64(p.DurationNanos))
		for _, s := range p.Sample {
			if s.Value[t] == 0 {
				continue
			}
			stack := pprofile.NewStack()
			for _, l := range s.Location {
				stack.LocationIndices().Append(locations[l.ID])
			}
			sample := prof.Samples().AppendEmpty()
			sample.SetStackIndex(must(pprofile.SetStack(dict.StackTable(), stack)))
			sample.Values().Append(s.Value[t])
			for _, k := range sortedKeys(s.Label) {
				for _, v := range s.Label[k] {
					kv := pprofile.NewKeyValueAndUnit()
					kv.SetKeyStrindex(str(k))
					kv.Value().SetStr(v)
					sample.AttributeIndices().Append(must(pprofile.SetAttribute(dict.AttributeTable(), kv)))
				}
			}
			for _, k := range sortedKeys(s.NumLabel) {
				for i, v := range s.NumLabel[k] {
					kv := pprofile.NewKeyValueAndUnit()
					kv.SetKeyStrindex(str(k))
					kv.Value().SetInt(v)
					if i < len(s.NumUnit[k]) {
						kv.SetUnitStrindex(str(s.NumUnit[k][i]))
					}
					sample.AttributeIndices().Append(must(pprofile.SetAttribute(dict.AttributeTable(), kv)))
				}
			}
		}
	}
	return pd, nil
}

func sortedKeys[V any](m map[string]V) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

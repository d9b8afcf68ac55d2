module github.com/profdiff/profdiff/profile/otlp/testdata/gen-translator

go 1.26.0

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/pprof v0.0.0-00010101000000-000000000000
	go.opentelemetry.io/collector/pdata/pprofile v0.165.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/hashicorp/go-version v1.9.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	go.opentelemetry.io/collector/featuregate v1.71.0 // indirect
	go.opentelemetry.io/collector/pdata v1.71.0 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
)

// The translator is not served by the Go module proxy: ./translator is a
// link to its source, which the testdata README says how to make.
replace github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/pprof => ./translator

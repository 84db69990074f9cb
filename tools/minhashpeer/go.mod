module github.com/dedupstudio/dedupstudio/tools/minhashpeer

go 1.26.8

require (
	github.com/dedupstudio/dedupstudio v0.0.0
	github.com/dgryski/go-metro v0.0.0-20250106013310-edb8663e5e33
	github.com/dgryski/go-minhash v0.0.0-20170608043002-7fe510aff544
	github.com/dgryski/go-spooky v0.0.0-20170606183049-ed3d087f40e2
	golang.org/x/sys v0.50.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)

replace github.com/dedupstudio/dedupstudio => ../..

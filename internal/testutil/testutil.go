// Package testutil holds the helpers that several packages' tests and benchmarks share, so that
// each is written once: CPU time, a preflightd process started for a test and its metrics, an
// in-memory gRPC connection, expected errors in table cases. It is imported only from _test.go
// files and the bench/ harnesses and must not grow anything the product uses.
package testutil

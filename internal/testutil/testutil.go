// Package testutil holds the helpers that several packages' tests and benchmarks share, so that
// each is written once. It is imported only from _test.go files and must not grow anything the
// product uses.
package testutil

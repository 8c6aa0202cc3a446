package gcs

import (
	"bytes"
	"net/http"
	"testing"
	"unicode/utf8"
)

// FuzzResponses feeds what a store (or something posing as one) sends to the parsers of its
// answers: object metadata, a listing page, an error body and an X-Goog-Hash header. None may
// panic; what they accept must be usable.
func FuzzResponses(f *testing.F) {
	f.Add([]byte(`{"name":"a/_metadata","size":"11974","generation":"1733115342791385","updated":"2026-12-02T04:55:42.791Z","etag":"CNmr"}`), "crc32c=n03x6A==,md5=Ojk9c3dhfxgoKVVHYwFbHQ==")
	f.Add([]byte(`{"items":[{"name":"p/a"}],"prefixes":["p/chk-1/"],"nextPageToken":"p/b"}`), "crc32c=AAAAAA==")
	f.Add([]byte(`{"error":{"code":403,"message":"reader@x does not have storage.objects.get access"}}`), "md5=x,crc32c=@@@")
	f.Add([]byte(`{"size":"-1"}`), "")
	f.Add([]byte("<html>\xff\xfe 503</html>"), "crc32c")
	f.Fuzz(func(t *testing.T, body []byte, hashHeader string) {
		if a, err := parseObjectMetadata(bytes.NewReader(body)); err == nil && a.Size < 0 {
			t.Errorf("accepted a negative size: %+v", a)
		}
		if _, err := parseListPage(bytes.NewReader(body)); err != nil && err.Error() == "" {
			t.Error("an error without a message")
		}
		msg := errorMessage(bytes.NewReader(body))
		if len(msg) > maxMessageBytes+len("…") {
			t.Errorf("message of %d bytes", len(msg))
		}
		if utf8.Valid(body) && !utf8.ValidString(msg) {
			t.Errorf("message %q cut inside a character", msg)
		}
		crc32cOf(http.Header{"X-Goog-Hash": {hashHeader}})
	})
}

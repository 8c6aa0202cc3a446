package server

import (
	"embed"
	"io/fs"
	"net/http"
)

// webFiles is the page preflightd serves at /: plain HTML, CSS and JavaScript with no external
// resources, so it works on a network without internet access.
//
//go:embed web
var webFiles embed.FS

// registerWeb serves the page at / and its assets under /web/.
func (s *Server) registerWeb(mux *http.ServeMux) {
	sub, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		panic(err)
	}
	secure := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Everything the page needs comes from this server; nothing may frame it.
			w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Referrer-Policy", "no-referrer")
			h.ServeHTTP(w, r)
		})
	}
	mux.Handle("GET /{$}", secure(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(index)
	})))
	mux.Handle("GET /web/", secure(http.StripPrefix("/web/", http.FileServerFS(sub))))
}

package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/restorecode"
	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Job code: the job jars and catalog files a check names (CheckOptions.job_jar_uris and
// catalog_uris) extend the server's catalog for that check, exactly as check --job-jar and
// --catalog do in-process (client/preflight newEngine): the catalog files are merged into the
// server's catalog in order, then the analysis of the jars (restorecode), which takes precedence.
//
// Every URI is opened through the sources, under the allowlist and the size limit of
// checkpoints (MaxUploadBytes), as the classpath verb opens its jars; class folders only as
// local paths. A version's identity is what the source gives (path, size and mtime; an object
// store's ETag) or, when it gives none, the SHA-256 of the bytes; a catalog file is always
// identified by its bytes (it is read anyway, and small). The identities of all of them, in
// order, are the check's code key: it enters the result key (memo.go), so a check with a jar is
// never answered from the memo of a check without it or with another version of it.
//
// The analysis of a set of jars is computed once per identity (concurrent checks share the
// flight) and kept in an LRU (maxAnalyses entries, maxCodeCacheBytes estimated bytes), as are
// the engines built from them (maxCodeEngines, maxCodeCacheBytes): at most 128 MiB together,
// outside the memory budget, as the daemon's baseline is. An analysis holds a check slot and, from the memory budget,
// analysisBaseBytes + the jars' sizes while it runs: a remote jar is held in memory (no
// temporary file: the chart's root file system is read-only), and the analysis inflates one
// class at a time, so its memory beyond the jars does not grow with their classes
// (bench/README.md, "Restore-code analysis").
const (
	maxJobJars      = 16       // job_jar_uris per check
	maxCatalogURIs  = 16       // catalog_uris per check
	maxCatalogBytes = 16 << 20 // one catalog file
	maxAnalyses     = 32       // analyses kept
	maxCodeEngines  = 32       // engines kept (catalog + analysis merged)
	// maxCodeCacheBytes bounds each of the two LRUs in estimated bytes: codeBytesPerJSONByte ×
	// the JSON of the catalog entries they hold (strings, slices and the parsed structs).
	maxCodeCacheBytes    = 64 << 20
	codeBytesPerJSONByte = 4
	// engineBaseBytes is an engine's share of the built-in catalog (its clone copies the
	// entries' headers, not their strings).
	engineBaseBytes = 64 << 10
	// maxClassFolderEntries bounds the files a class folder's identity walks
	// (restorecode.Options.MaxEntries' default).
	maxClassFolderEntries = 200_000
	// analysisBaseBytes + the jars' bytes is the memory an analysis is granted: it inflates
	// one class at a time and keeps the parsed candidates, which the bench measures below that.
	analysisBaseBytes = 32 << 20
	// classFolderBytes stands for a folder's bytes in the estimate (its size is not summed).
	classFolderBytes = 64 << 20
)

// jobCode is a check's job code: the engine with its catalog and the identity of what built it.
type jobCode struct {
	eng   *engine.Engine
	key   string
	bytes int64 // estimated, for the LRU
	// disagreements are where the analysis labels a state otherwise than a catalog entry for
	// the same class (restorecode.Disagreements), logged with every check that uses it.
	disagreements []string
}

type jobCodeKey struct{}

// CatalogDisagreementHeader is the response header naming, one value each, where the analysis of
// the job jars labels a state otherwise than a catalog entry for the same class (at most 10;
// binary metadata, so any state name passes). It is client.CatalogDisagreementHeader.
const CatalogDisagreementHeader = "preflight-catalog-disagreement-bin"

// engine is the engine for the check running under ctx: the job code's, or the server's own.
func (s *Server) engine(ctx context.Context) *engine.Engine {
	if jc, ok := ctx.Value(jobCodeKey{}).(*jobCode); ok {
		return jc.eng
	}
	return s.cfg.Engine
}

// codeKey is the identity of the check's job code under ctx, "" without one.
func codeKey(ctx context.Context) string {
	if jc, ok := ctx.Value(jobCodeKey{}).(*jobCode); ok {
		return jc.key
	}
	return ""
}

// withJobCode resolves the job jars and catalog files of opts and returns ctx carrying the
// engine to check with (unchanged when opts names none).
func (s *Server) withJobCode(ctx context.Context, opts *pb.CheckOptions) (context.Context, error) {
	jars, cats := opts.GetJobJarUris(), opts.GetCatalogUris()
	if len(jars) == 0 && len(cats) == 0 {
		return ctx, nil
	}
	if len(jars) > maxJobJars {
		return nil, errInvalid("options.job_jar_uris: %d jars, at most %d", len(jars), maxJobJars)
	}
	if len(cats) > maxCatalogURIs {
		return nil, errInvalid("options.catalog_uris: %d catalogs, at most %d", len(cats), maxCatalogURIs)
	}
	var key strings.Builder
	catalogs := make([][]byte, len(cats))
	for i, uri := range cats {
		b, err := s.readCatalog(ctx, uri)
		if err != nil {
			return nil, fieldStatus(ctx, fmt.Sprintf("options.catalog_uris[%d]", i), err)
		}
		catalogs[i] = b
		sum := sha256.Sum256(b)
		fmt.Fprintf(&key, "c%d:%s|%s\x00", len(uri), uri, hex.EncodeToString(sum[:]))
	}
	refs := make([]*jarRef, 0, len(jars))
	for i, uri := range jars {
		r, err := s.openJar(ctx, uri)
		if err != nil {
			return nil, fieldStatus(ctx, fmt.Sprintf("options.job_jar_uris[%d]", i), err)
		}
		refs = append(refs, r)
		fmt.Fprintf(&key, "j%d:%s|%s\x00", len(uri), uri, r.id)
	}
	jc, err := s.codeEngine(ctx, key.String(), cats, catalogs, refs)
	if err != nil {
		return nil, err
	}
	addLog(ctx, slog.Int("job_jars", len(jars)), slog.Int("catalog_uris", len(cats)))
	if len(jc.disagreements) > 0 {
		md := metadata.MD{}
		for _, d := range jc.disagreements[:min(len(jc.disagreements), 10)] {
			addLog(ctx, slog.String("catalog_disagreement", d))
			md.Append(CatalogDisagreementHeader, d)
		}
		// The CLI prints them as it does in-process; best effort (a caller without a stream,
		// such as a test calling the handler, has no header to set).
		_ = grpc.SetHeader(ctx, md)
	}
	return context.WithValue(ctx, jobCodeKey{}, jc), nil
}

// fieldStatus maps err as toStatus does and names the request field in its message.
func fieldStatus(ctx context.Context, field string, err error) error {
	st := status.Convert(toStatus(ctx, err))
	if st.Code() == codes.Canceled || st.Code() == codes.DeadlineExceeded {
		return st.Err()
	}
	return status.Error(st.Code(), field+": "+st.Message())
}

// readCatalog reads a catalog file through the sources, at most maxCatalogBytes.
func (s *Server) readCatalog(ctx context.Context, uri string) ([]byte, error) {
	obj, err := s.sources.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	if obj.Size > maxCatalogBytes {
		return nil, &limitError{fmt.Sprintf("catalog of %d bytes exceeds the limit of %d", obj.Size, maxCatalogBytes)}
	}
	b, err := io.ReadAll(io.LimitReader(obj, maxCatalogBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxCatalogBytes {
		return nil, &limitError{fmt.Sprintf("catalog larger than the limit of %d bytes", maxCatalogBytes)}
	}
	return b, nil
}

// codeEngine returns the engine for the job code named by key, built once per key.
func (s *Server) codeEngine(ctx context.Context, key string, cats []string, catalogs [][]byte, refs []*jarRef) (*jobCode, error) {
	if jc, ok := s.code.engines.get(key); ok {
		return jc, nil
	}
	cat, err := s.cfg.Engine.Catalog().Clone()
	if err != nil {
		return nil, err
	}
	jc := &jobCode{key: key, bytes: engineBaseBytes}
	for i, b := range catalogs {
		jc.bytes += codeBytesPerJSONByte * int64(len(b))
		if err := cat.MergeJSON(b, cats[i]); err != nil {
			return nil, status.Error(codes.InvalidArgument, fmt.Sprintf("options.catalog_uris[%d]: %v", i, err))
		}
	}
	if len(refs) > 0 {
		a, err := s.analysis(ctx, refs)
		if err != nil {
			return nil, err
		}
		jc.disagreements = restorecode.Disagreements(cat, a.cat)
		jc.bytes += codeBytesPerJSONByte * int64(len(a.json))
		if err := cat.MergeJSON(a.json, "job_jar_uris analysis"); err != nil {
			return nil, err
		}
	}
	jc.eng = engine.NewWithCatalog(cat)
	s.code.engines.put(key, jc, jc.bytes)
	return jc, nil
}

// analyzed is what the analysis of a set of jars gives: catalog entries, also as JSON.
type analyzed struct {
	cat  *findings.Catalog
	json []byte
}

// analysis returns the catalog entries the analysis of the jars gives, computed once per set
// of jar versions.
func (s *Server) analysis(ctx context.Context, refs []*jarRef) (*analyzed, error) {
	var key strings.Builder
	for _, r := range refs {
		fmt.Fprintf(&key, "%d:%s|%s\x00", len(r.uri), r.uri, r.id)
	}
	if a, ok := s.code.analyses.get(key.String()); ok {
		return a, nil
	}
	v, err, _ := s.flights.do(ctx, "analysis\x00"+key.String(), func(ctx context.Context) (any, error) {
		if a, ok := s.code.analyses.get(key.String()); ok {
			return a, nil
		}
		cat, err := s.analyze(ctx, refs)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(cat)
		if err != nil {
			return nil, err
		}
		a := &analyzed{cat: cat, json: b}
		s.code.analyses.put(key.String(), a, codeBytesPerJSONByte*int64(len(b)))
		return a, nil
	})
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return v.(*analyzed), nil
}

// analyze runs the restore-code analysis under a check slot and its memory grant. Like the
// CLI, it fails only when no jar could be read at all; errors about single classes are logged.
// It runs in a flight, possibly for callers other than the one whose refs it was given: it
// fetches remote jars itself, and refuses a version other than the identified one.
func (s *Server) analyze(ctx context.Context, refs []*jarRef) (*findings.Catalog, error) {
	mem := int64(analysisBaseBytes)
	for _, r := range refs {
		mem += r.size
	}
	if mem > s.cfg.MemoryBudget {
		return nil, &BudgetError{
			What: fmt.Sprintf("analyzing the job jars needs an estimated %s of memory (%s + the jars' sizes)", fmtBytes(mem), fmtBytes(analysisBaseBytes)),
			Need: mem, Budget: s.cfg.MemoryBudget,
		}
	}
	g, err := s.adm.acquire(ctx, true, mem, false)
	if err != nil {
		return nil, err
	}
	defer g.release()
	s.code.runs.Add(1)
	inputs := make([]restorecode.Input, len(refs))
	byPath := map[string]string{}
	for i, r := range refs {
		if r.path != "" {
			inputs[i] = restorecode.Input{Path: r.path}
			byPath[r.path] = r.uri
			continue
		}
		b, _, err := s.fetch(ctx, r)
		if err != nil {
			return nil, fieldStatus(ctx, fmt.Sprintf("options.job_jar_uris[%d]", i), err)
		}
		inputs[i] = restorecode.Input{Path: r.uri, Jar: bytes.NewReader(b), Size: int64(len(b))}
		byPath[r.uri] = r.uri
	}
	rep, err := restorecode.Analyze(ctx, inputs, restorecode.Options{})
	if err != nil {
		return nil, err
	}
	// The report names each jar by its URI, as the request does, not by the server's path.
	for i := range rep.Classes {
		rep.Classes[i].Jar = byPath[rep.Classes[i].Jar]
	}
	unread := 0
	for i, e := range rep.Errors {
		rep.Errors[i].Jar = byPath[e.Jar]
		if e.Class == "" {
			unread++
		}
	}
	if unread == len(refs) && len(rep.Classes) == 0 {
		return nil, status.Error(codes.InvalidArgument, "options.job_jar_uris: "+rep.Errors[0].Error())
	}
	for _, e := range rep.Errors[:min(len(rep.Errors), 20)] {
		addLog(ctx, slog.String("analysis_error", e.Error()))
	}
	return rep.Catalog(), nil
}

// jarRef is one job jar or class folder named by a check, with its version's identity.
type jarRef struct {
	uri  string
	id   string
	size int64  // bytes, for the memory estimate
	path string // a local jar or folder; "" for a remote jar, which is read into memory
}

// fetch reads a remote jar (at most MaxUploadBytes, which the source's limit enforces while
// reading; the analysis's memory grant counts them) and checks that it is the version r
// identifies (r.id empty: any). digest is the SHA-256 of its bytes.
func (s *Server) fetch(ctx context.Context, r *jarRef) (b []byte, digest string, err error) {
	obj, err := s.sources.Open(ctx, r.uri)
	if err != nil {
		return nil, "", err
	}
	defer obj.Close()
	changed := status.Error(codes.Aborted, "the jar changed while it was being checked; ask again")
	if obj.CacheKey != "" && r.id != "" && obj.CacheKey != r.id {
		return nil, "", changed
	}
	var buf bytes.Buffer
	if obj.Size > 0 {
		buf.Grow(int(min(obj.Size, s.cfg.MaxUploadBytes)))
	}
	if _, err := buf.ReadFrom(obj); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	digest = "sha256:" + hex.EncodeToString(sum[:])
	if obj.CacheKey == "" && r.id != "" && digest != r.id {
		return nil, "", changed
	}
	return buf.Bytes(), digest, nil
}

// openJar vets a job jar URI against the allowlist and identifies its version: local files
// and folders through Opener.LocalPath (as the classpath verb does), other URIs through
// Opener.Open (a store's HEAD; the bytes are fetched only when the analysis is not cached,
// except from a source that names no version: its bytes are then read once more to identify
// them).
func (s *Server) openJar(ctx context.Context, uri string) (*jarRef, error) {
	if _, local := source.FilePath(uri); local {
		p, err := s.sources.LocalPath(uri)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		r := &jarRef{uri: uri, path: p, size: fi.Size()}
		if fi.IsDir() {
			r.size = classFolderBytes
			r.id, err = folderIdentity(ctx, p)
			return r, err
		}
		r.id = fmt.Sprintf("file://%s|%d|%d", filepath.ToSlash(p), fi.Size(), fi.ModTime().UnixNano())
		return r, nil
	}
	obj, err := s.sources.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	r := &jarRef{uri: uri, size: obj.Size, id: obj.CacheKey}
	obj.Close()
	if r.size < 0 {
		r.size = s.cfg.MaxUploadBytes
	}
	if r.id == "" {
		_, digest, err := s.fetch(ctx, r)
		if err != nil {
			return nil, err
		}
		r.id = digest
	}
	return r, nil
}

// folderIdentity digests the names, sizes and modification times of a class folder's files.
func folderIdentity(ctx context.Context, root string) (string, error) {
	h := sha256.New()
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > maxClassFolderEntries {
			return &limitError{fmt.Sprintf("class folder with more than %d entries", maxClassFolderEntries)}
		}
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() || !strings.HasSuffix(p, ".class") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		io.WriteString(h, rel+"\x00"+strconv.FormatInt(fi.Size(), 10)+"\x00"+strconv.FormatInt(fi.ModTime().UnixNano(), 10)+"\x00")
		return nil
	})
	if err != nil {
		return "", err
	}
	return "dir:" + hex.EncodeToString(h.Sum(nil)), nil
}

// codeCaches holds the analyses and engines of job code, each a small LRU.
type codeCaches struct {
	analyses *boundedLRU[*analyzed] // by jar set identity
	engines  *boundedLRU[*jobCode]  // by code key
	runs     atomic.Int64           // analyses run (tests)
}

func newCodeCaches() *codeCaches {
	return &codeCaches{analyses: newBoundedLRU[*analyzed](maxAnalyses, maxCodeCacheBytes), engines: newBoundedLRU[*jobCode](maxCodeEngines, maxCodeCacheBytes)}
}

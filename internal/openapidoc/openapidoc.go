// Package openapidoc builds the OpenAPI document preflightd serves from the one protoc-gen-openapiv2
// generates: it adds the routes that are not generated from the protos (the raw-body upload, from a
// hand-written fragment), documents the fields of the well-known error types, and rewrites the
// `$ref` siblings that OpenAPI 2.0 ignores (and strict linters reject) into `allOf`, so that a
// field's description survives.
package openapidoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// wellKnown documents the properties of google.rpc.Status and google.protobuf.Any, whose
// generated schemas carry none.
var wellKnown = map[string]map[string]string{
	"rpcStatus": {
		"code":    "The gRPC status code (3 INVALID_ARGUMENT, 5 NOT_FOUND, 7 PERMISSION_DENIED, 8 RESOURCE_EXHAUSTED, 14 UNAVAILABLE, ...).",
		"message": "What went wrong, in English, naming the path, byte offset or limit concerned.",
		"details": "Typed details: preflight.v1.MetadataFormatError, google.rpc.BadRequest, google.rpc.RetryInfo.",
	},
	"protobufAny": {
		"@type": "The type of the detail, e.g. type.googleapis.com/preflight.v1.MetadataFormatError.",
	},
}

// Build merges extra's paths and definitions into generated and normalises the result. A path or
// definition defined in both is an error: the fragment adds, it never overrides.
func Build(generated, extra []byte) ([]byte, error) {
	var doc, add map[string]any
	if err := json.Unmarshal(generated, &doc); err != nil {
		return nil, fmt.Errorf("generated document: %w", err)
	}
	if err := json.Unmarshal(extra, &add); err != nil {
		return nil, fmt.Errorf("fragment: %w", err)
	}
	for _, section := range []string{"paths", "definitions"} {
		dst, _ := doc[section].(map[string]any)
		if dst == nil {
			dst = map[string]any{}
			doc[section] = dst
		}
		src, _ := add[section].(map[string]any)
		keys := make([]string, 0, len(src))
		for k := range src {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, dup := dst[k]; dup {
				return nil, fmt.Errorf("fragment redefines %s %q", section, k)
			}
			dst[k] = src[k]
		}
	}
	if defs, ok := doc["definitions"].(map[string]any); ok {
		for name, props := range wellKnown {
			def, _ := defs[name].(map[string]any)
			ps, _ := def["properties"].(map[string]any)
			for p, desc := range props {
				if s, ok := ps[p].(map[string]any); ok && s["description"] == nil && s["title"] == nil {
					s["description"] = desc
				}
			}
		}
	}
	fixRefSiblings(doc)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// fixRefSiblings walks the document: a schema with `$ref` and other keys loses a redundant
// "type" and wraps the reference in allOf to keep its description and title.
func fixRefSiblings(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			fixRefSiblings(c)
		}
		ref, ok := x["$ref"]
		if !ok || len(x) == 1 {
			return
		}
		delete(x, "type")
		if len(x) == 1 {
			return
		}
		delete(x, "$ref")
		x["allOf"] = []any{map[string]any{"$ref": ref}}
	case []any:
		for _, c := range x {
			fixRefSiblings(c)
		}
	}
}

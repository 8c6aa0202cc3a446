// Package helm holds the pinned Helm CLI (a tool of this module) and the offline validation of
// the chart in deploy/helm/preflight: `helm lint --strict` through the Helm SDK, and a rendering
// of every combination of the chart's switches, each manifest decoded strictly (unknown fields
// rejected) into the Kubernetes API types, since schemas cannot be downloaded at test time.
package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

const chartDir = "../../deploy/helm/preflight"

// builtin maps a kind to the API type a manifest of that kind must decode into.
var builtin = map[string]func() any{
	"apps/v1/Deployment":                      func() any { return &appsv1.Deployment{} },
	"v1/Service":                              func() any { return &corev1.Service{} },
	"v1/ConfigMap":                            func() any { return &corev1.ConfigMap{} },
	"v1/ServiceAccount":                       func() any { return &corev1.ServiceAccount{} },
	"networking.k8s.io/v1/NetworkPolicy":      func() any { return &networkingv1.NetworkPolicy{} },
	"policy/v1/PodDisruptionBudget":           func() any { return &policyv1.PodDisruptionBudget{} },
	"autoscaling/v2/HorizontalPodAutoscaler":  func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"monitoring.coreos.com/v1/ServiceMonitor": nil, // a CRD: checked for its identity only
	"cert-manager.io/v1/Certificate":          nil,
	"v1/Secret":                               func() any { return &corev1.Secret{} },
	"admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration": func() any {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{}
	},
}

func TestLintStrict(t *testing.T) {
	lint := action.NewLint()
	lint.Strict = true
	res := lint.Run([]string{chartDir}, map[string]any{})
	for _, m := range res.Messages {
		t.Logf("lint: %s", m)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("helm lint --strict: %v", res.Errors)
	}
	for _, m := range res.Messages {
		if m.Severity > 1 { // warnings and errors fail a strict lint
			t.Errorf("helm lint --strict: %s", m)
		}
	}
}

// TestRenderEveryCombination renders the chart for every combination of its switches and decodes
// every manifest strictly into its Kubernetes type.
func TestRenderEveryCombination(t *testing.T) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	tlsModes := []map[string]any{
		{"enabled": false},
		{"enabled": true, "secretName": "preflight-tls"},
		{"enabled": true, "secretName": "preflight-tls", "mutualTLS": true},
		{"enabled": true, "mutualTLS": true, "certManager": map[string]any{"enabled": true, "issuerRef": map[string]any{"name": "ca", "kind": "ClusterIssuer"}, "dnsNames": []any{"preflight.example.org"}}},
	}
	n := 0
	for ti, tlsMode := range tlsModes {
		for mask := 0; mask < 1<<7; mask++ {
			on := func(bit int) bool { return mask&(1<<bit) != 0 }
			vals := map[string]any{
				"tls":                 tlsMode,
				"serviceMonitor":      map[string]any{"enabled": on(0)},
				"networkPolicy":       map[string]any{"enabled": on(1)},
				"podDisruptionBudget": map[string]any{"enabled": on(2)},
				"autoscaling":         map[string]any{"enabled": on(3)},
			}
			if on(1) && on(4) {
				vals["networkPolicy"] = map[string]any{"enabled": true,
					"from":   []any{map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{"app": "flink-operator"}}}},
					"egress": []any{map[string]any{"ports": []any{map[string]any{"port": 443, "protocol": "TCP"}}}}}
			}
			if on(4) {
				vals["objectStore"] = map[string]any{"secretName": "s3-creds"}
			}
			if on(5) {
				vals["allow"] = []any{"s3://flink-state/savepoints/?region=eu-west-1", "/data/checkpoints"}
				vals["config"] = map[string]any{"max-upload-bytes": "1GiB", "max-concurrent": 8, "queue-wait": "5s"}
			}
			webhook := on(6) && ti > 0 // the API server calls webhooks over https only
			if webhook {
				vals["flinkAdmission"] = admissionValues(ti, on(5))
			}
			name := fmt.Sprintf("tls%d-mask%02x", ti, mask)
			t.Run(name, func(t *testing.T) {
				kinds := render(t, chrt, vals)
				want := map[string]bool{
					"apps/v1/Deployment": true,
					"v1/Service":         true,
					"v1/ConfigMap":       true,
					"monitoring.coreos.com/v1/ServiceMonitor":                        on(0),
					"networking.k8s.io/v1/NetworkPolicy":                             on(1),
					"policy/v1/PodDisruptionBudget":                                  on(2),
					"autoscaling/v2/HorizontalPodAutoscaler":                         on(3),
					"cert-manager.io/v1/Certificate":                                 ti == 3,
					"admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration": webhook,
					"v1/Secret": webhook && ti == 2, // the chart-generated certificate
				}
				for k, w := range want {
					if kinds[k] != w {
						t.Errorf("%s rendered: %v, want %v", k, kinds[k], w)
					}
				}
			})
			n++
		}
	}
	t.Logf("%d value combinations rendered and decoded", n)
}

// admissionValues enable the Flink admission webhook with each way of getting its CA: cert-manager
// (tls mode 3), a chart-generated certificate (tls mode 2), or a given caBundle (tls mode 1); more
// selects a namespace, the Fail policy and CREATE only.
func admissionValues(tlsMode int, more bool) map[string]any {
	v := map[string]any{"enabled": true}
	switch tlsMode {
	case 1:
		v["caBundle"] = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
	case 2:
		v["generateCertificate"] = true
	}
	if more {
		v["failurePolicy"] = "Fail"
		v["checkFailurePolicy"] = "closed"
		v["timeoutSeconds"] = 8
		v["checkTimeout"] = "4500ms"
		v["operations"] = []any{"UPDATE"}
		v["namespaceSelector"] = map[string]any{"matchLabels": map[string]any{"preflight.flinkpreflight.io/admission": "enabled"}}
		v["objectSelector"] = map[string]any{"matchExpressions": []any{map[string]any{"key": "preflight.flinkpreflight.io/skip", "operator": "DoesNotExist"}}}
	}
	return v
}

// render renders the chart with vals (checked against values.schema.json) and decodes each
// manifest; it returns the kinds found.
func render(t *testing.T, c *chart.Chart, vals map[string]any) map[string]bool {
	t.Helper()
	opts := chartutil.ReleaseOptions{Name: "preflight", Namespace: "flink", IsInstall: true}
	values, err := chartutil.ToRenderValues(c, vals, opts, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	out, err := engine.Render(c, values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	kinds := map[string]bool{}
	for path, text := range out {
		if filepath.Base(path) == "NOTES.txt" || strings.TrimSpace(text) == "" {
			continue
		}
		for _, doc := range strings.Split(text, "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s: not YAML: %v\n%s", path, err, doc)
			}
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(j, &meta); err != nil || meta.Kind == "" || meta.Metadata.Name == "" {
				t.Fatalf("%s: no kind or name (%v)", path, err)
			}
			key := meta.APIVersion + "/" + meta.Kind
			newObj, known := builtin[key]
			if !known {
				t.Fatalf("%s: unexpected %s", path, key)
			}
			kinds[key] = true
			if newObj == nil {
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(j))
			dec.DisallowUnknownFields()
			if err := dec.Decode(newObj()); err != nil {
				t.Fatalf("%s: %s does not decode strictly into the Kubernetes type: %v\n%s", path, key, err, doc)
			}
		}
	}
	return kinds
}

package classpath

import (
	"cmp"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/jarindex"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Input names the job jar and the cluster.
type Input struct {
	JobJar       string // the job (uber) jar
	Lib          string // the cluster's lib/ folder
	Plugins      string // plugins/ folder, optional
	ConfFile     string // flink-conf.yaml or config.yaml, optional
	FlinkHome    string // fills Lib, Plugins and ConfFile when they are empty
	FlinkVersion string // "" = from lib/'s flink-dist jar name, else the newest rules
	JavaVersion  int    // the cluster JVM's feature release; 0 = unknown
	FailLevel    findings.Severity
	Limits       jarindex.Limits
	// Resolve, when set, vets every path before it is opened (the server's allowlist) and
	// returns the path to open.
	Resolve func(path string) (string, error)
}

// InputError is a problem with the named files (missing, not a jar, malformed): the caller's
// input, not an internal failure.
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// cluster is the parent side, indexed.
type cluster struct {
	version       Version
	versionSource string
	resolveOrder  string
	patterns      []string
	pluginPattern []string
	lib           []*jarindex.Jar
	libNames      []string // relative to lib/
	plugins       []plugin
	scala         string
	conf          *Config
	// parent maps a class to the lib jar and class that win on Flink's class path.
	parent map[string]classRef
}

type plugin struct {
	name string
	jars []*jarindex.Jar
}

type classRef struct{ jar, class int32 }

// Check indexes the jars and applies the rules.
func Check(ctx context.Context, in Input) (*pb.ClasspathReport, error) {
	if err := in.fillFromHome(); err != nil {
		return nil, err
	}
	if in.JobJar == "" {
		return nil, &InputError{Path: "job jar", Err: errors.New("not given")}
	}
	if in.Lib == "" {
		return nil, &InputError{Path: "lib", Err: errors.New("not given: name the cluster's lib/ folder (or its Flink home)")}
	}
	c, err := loadCluster(ctx, &in)
	if err != nil {
		return nil, err
	}
	defer c.close()
	// Class versions cost a pread and a few decoded symbols per class: read them always, so the
	// summary names the newest Java the job needs even when the cluster's is not given.
	job, err := in.indexJar(ctx, in.JobJar, true)
	if err != nil {
		return nil, err
	}
	defer job.Close()
	a := &analysis{in: &in, c: c, job: job}
	if err := a.run(ctx); err != nil {
		return nil, err
	}
	return a.report(), nil
}

func (in *Input) fillFromHome() error {
	if in.FlinkHome == "" {
		return nil
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	if in.Lib == "" {
		in.Lib = filepath.Join(in.FlinkHome, "lib")
	}
	if p := filepath.Join(in.FlinkHome, "plugins"); in.Plugins == "" && exists(p) {
		in.Plugins = p
	}
	if in.ConfFile == "" {
		for _, name := range []string{"config.yaml", "flink-conf.yaml"} {
			if p := filepath.Join(in.FlinkHome, "conf", name); exists(p) {
				in.ConfFile = p
				break
			}
		}
	}
	return nil
}

func (in *Input) resolve(p string) (string, error) {
	if in.Resolve == nil {
		return p, nil
	}
	return in.Resolve(p)
}

func (in *Input) indexJar(ctx context.Context, p string, versions bool) (*jarindex.Jar, error) {
	rp, err := in.resolve(p)
	if err != nil {
		return nil, err
	}
	j, err := jarindex.IndexFile(ctx, rp, jarindex.Options{ClassVersions: versions, Limits: in.Limits})
	if err != nil {
		var ze *jarindex.Error
		if errors.As(err, &ze) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, &InputError{Path: p, Err: err}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &InputError{Path: p, Err: err}
	}
	j.Path = p
	return j, nil
}

// listJars returns the *.jar files of a folder, sorted (as Flink's start scripts sort them).
func (in *Input) listJars(dir string) ([]string, error) {
	rd, err := in.resolve(dir)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(rd)
	if err != nil {
		return nil, &InputError{Path: dir, Err: err}
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jar") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

var distName = regexp.MustCompile(`^flink-dist(?:_(2\.\d+))?-(\d+\.\d+(?:\.\d+)?)`)

// loadCluster indexes the cluster's lib/ and plugins/ and reads its version and classloading
// configuration. On an error, what was indexed is closed.
func loadCluster(ctx context.Context, in *Input) (_ *cluster, err error) {
	c := &cluster{parent: map[string]classRef{}}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	names, distVersion, distScala, err := c.loadLib(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := c.setVersion(in, names, distVersion); err != nil {
		return nil, err
	}
	if err := c.applyConf(in); err != nil {
		return nil, err
	}
	c.indexParent(names, distScala)
	if err := c.loadPlugins(ctx, in); err != nil {
		return nil, err
	}
	return c, nil
}

// loadLib indexes lib/'s jars in the order Flink puts them on the class path, and returns their
// names and the Flink and Scala versions flink-dist's name carries.
func (c *cluster) loadLib(ctx context.Context, in *Input) (names []string, distVersion, distScala string, err error) {
	names, err = in.listJars(in.Lib)
	if err != nil {
		return nil, "", "", err
	}
	// config.sh constructFlinkClassPath: lib/*.jar sorted, flink-dist appended last.
	sort.SliceStable(names, func(i, j int) bool {
		return !strings.HasPrefix(names[i], "flink-dist") && strings.HasPrefix(names[j], "flink-dist")
	})
	for _, n := range names {
		if m := distName.FindStringSubmatch(n); m != nil {
			distScala, distVersion = m[1], m[2]
		}
		j, err := in.indexJar(ctx, filepath.Join(in.Lib, n), false)
		if err != nil {
			return nil, "", "", err
		}
		c.lib = append(c.lib, j)
		c.libNames = append(c.libNames, n)
	}
	return names, distVersion, distScala, nil
}

// setVersion takes the Flink version given, else flink-dist's, and the default parent-first
// patterns of that version.
func (c *cluster) setVersion(in *Input, names []string, distVersion string) error {
	switch {
	case in.FlinkVersion != "":
		v, ok := ParseVersion(in.FlinkVersion)
		if !ok {
			return &InputError{Path: "flink version", Err: fmt.Errorf("%q is not a Flink version such as 1.9.1", in.FlinkVersion)}
		}
		c.version, c.versionSource = v, "given"
	case distVersion != "":
		c.version, _ = ParseVersion(distVersion)
		c.versionSource = "lib/" + findPrefix(names, "flink-dist")
	default:
		c.versionSource = "not given: the newest rules apply"
	}
	c.resolveOrder = "child-first"
	c.patterns = DefaultParentFirst(c.version)
	c.pluginPattern = DefaultPluginParentFirst(c.version)
	return nil
}

// applyConf applies the Flink configuration file's classloading options, when one is given.
func (c *cluster) applyConf(in *Input) error {
	if in.ConfFile == "" {
		return nil
	}
	p, err := in.resolve(in.ConfFile)
	if err == nil {
		c.conf, err = ReadConfig(p)
	}
	if err != nil {
		return &InputError{Path: in.ConfFile, Err: err}
	}
	if c.conf.ResolveOrder != "" {
		c.resolveOrder = c.conf.ResolveOrder
	}
	if c.conf.ParentFirst != nil {
		c.patterns = c.conf.ParentFirst
	}
	c.patterns = append(c.patterns, c.conf.Additional...)
	if c.conf.PluginDefault != nil {
		c.pluginPattern = c.conf.PluginDefault
	}
	c.pluginPattern = append(c.pluginPattern, c.conf.PluginAdd...)
	return nil
}

// indexParent indexes the classes lib/ provides (the first jar of a class wins) and finds the
// cluster's Scala version: a lib jar's, else flink-dist's name, else a flink-*_2.x jar's name.
func (c *cluster) indexParent(names []string, distScala string) {
	for ji, j := range c.lib {
		for ci := range j.Classes {
			cl := &j.Classes[ci]
			if cl.Release != 0 {
				continue
			}
			if _, seen := c.parent[cl.Name]; !seen {
				c.parent[cl.Name] = classRef{int32(ji), int32(ci)}
			}
		}
		if j.ScalaVersion != "" && c.scala == "" {
			c.scala = scalaBinary(j.ScalaVersion)
		}
	}
	if c.scala == "" {
		c.scala = distScala
	}
	if c.scala == "" {
		for _, n := range names {
			if s := scalaSuffix(strings.SplitN(strings.TrimSuffix(n, ".jar"), "-1.", 2)[0]); s != "" && strings.HasPrefix(n, "flink-") {
				c.scala = s
				break
			}
		}
	}
}

// loadPlugins indexes every plugin folder's jars, when a plugins folder is given.
func (c *cluster) loadPlugins(ctx context.Context, in *Input) error {
	if in.Plugins == "" {
		return nil
	}
	rd, err := in.resolve(in.Plugins)
	if err != nil {
		return err
	}
	ents, err := os.ReadDir(rd)
	if err != nil {
		return &InputError{Path: in.Plugins, Err: err}
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(in.Plugins, e.Name())
		jars, err := in.listJars(dir)
		if err != nil {
			return err
		}
		pl := plugin{name: e.Name()}
		for _, n := range jars {
			j, err := in.indexJar(ctx, filepath.Join(dir, n), false)
			if err != nil {
				return err
			}
			pl.jars = append(pl.jars, j)
		}
		c.plugins = append(c.plugins, pl)
	}
	return nil
}

func findPrefix(names []string, prefix string) string {
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			return n
		}
	}
	return ""
}

func (c *cluster) close() {
	for _, j := range c.lib {
		j.Close()
	}
	for _, p := range c.plugins {
		for _, j := range p.jars {
			j.Close()
		}
	}
}

func (c *cluster) parentFirst(class string) bool {
	if c.resolveOrder == "parent-first" {
		return true
	}
	for _, p := range c.patterns {
		if strings.HasPrefix(class, p) {
			return true
		}
	}
	return false
}

func (c *cluster) libJar(r classRef) string { return "lib/" + c.libNames[r.jar] }

// dup is a job class that the parent also has.
type dup struct {
	job    int32 // index in job.Classes
	parent classRef
	differ bool
}

type analysis struct {
	in  *Input
	c   *cluster
	job *jarindex.Jar

	childDups map[int32][]dup     // child-first duplicates by lib jar
	shadowed  map[int32][]dup     // parent-first resolve order: job classes lib/ shadows, by lib jar
	dead      map[string][]dup    // parent-first-pattern classes the parent also has, by module
	fallback  map[string][]int32  // parent-first-pattern Flink classes the parent lacks, by module
	plugins   map[string][]int32  // plugin-only module classes in the job jar, by module
	referrers map[string][]string // duplicated class (dots) → parent classes referencing it
	dupByName map[string]bool     // internal (slash) names of child-first duplicates
	results   []result
}

type result struct {
	f findings.Finding
	d *pb.ClasspathFindingDetail
}

func (a *analysis) run(ctx context.Context) error {
	a.childDups, a.shadowed = map[int32][]dup{}, map[int32][]dup{}
	a.dead, a.fallback, a.plugins = map[string][]dup{}, map[string][]int32{}, map[string][]int32{}
	a.referrers, a.dupByName = map[string][]string{}, map[string]bool{}
	c := a.c
	for i := range a.job.Classes {
		cl := &a.job.Classes[i]
		if cl.Release != 0 {
			continue
		}
		mod := ModuleOf(cl.Name)
		if mod != nil && mod.Plugin != "" {
			a.plugins[mod.Name] = append(a.plugins[mod.Name], int32(i))
			continue
		}
		p, inParent := c.parent[cl.Name]
		pf := c.parentFirst(cl.Name)
		matchesPattern := c.resolveOrder != "parent-first" || c.patternMatch(cl.Name)
		switch {
		case inParent && !pf:
			pc := &c.lib[p.jar].Classes[p.class]
			a.childDups[p.jar] = append(a.childDups[p.jar], dup{int32(i), p, pc.Size != cl.Size || pc.CRC32 != cl.CRC32})
			a.dupByName[strings.ReplaceAll(cl.Name, ".", "/")] = true
		case inParent && pf && matchesPattern:
			name := packageGroup(cl.Name) // a class no known module owns: grouped by package
			if mod != nil {
				name = mod.Name
			}
			pc := &c.lib[p.jar].Classes[p.class]
			a.dead[name] = append(a.dead[name], dup{int32(i), p, pc.Size != cl.Size || pc.CRC32 != cl.CRC32})
		case inParent && pf:
			pc := &c.lib[p.jar].Classes[p.class]
			a.shadowed[p.jar] = append(a.shadowed[p.jar], dup{int32(i), p, pc.Size != cl.Size || pc.CRC32 != cl.CRC32})
		case !inParent && pf && strings.HasPrefix(cl.Name, "org.apache.flink.") && mod != nil:
			a.fallback[mod.Name] = append(a.fallback[mod.Name], int32(i))
		}
	}
	a.mergePluginParts()
	if len(a.dupByName) > 0 {
		if err := a.findReferrers(ctx); err != nil {
			return err
		}
	}
	a.ruleDuplicates()
	a.ruleDead()
	a.ruleFallback()
	a.rulePlugins()
	a.ruleScala()
	a.ruleJava()
	a.ruleResolveOrder()
	a.ruleNested()
	if err := a.ruleSigned(); err != nil {
		return err
	}
	return nil
}

// patternMatch ignores the resolve order: does a configured pattern cover the class?
func (c *cluster) patternMatch(class string) bool {
	for _, p := range c.patterns {
		if strings.HasPrefix(class, p) {
			return true
		}
	}
	return false
}

// findReferrers reads the constant pools of the parent classes user code can reach through the
// parent loader (every winning lib/ class that is not itself a child-first duplicate) and
// records which of them reference a duplicated class.
func (a *analysis) findReferrers(ctx context.Context) error {
	c := a.c
	jobHas := map[string]bool{}
	for _, d := range a.childDups {
		for _, x := range d {
			jobHas[a.job.Classes[x.job].Name] = true
		}
	}
	n := 0
	for ji, j := range c.lib {
		for ci := range j.Classes {
			k := &j.Classes[ci]
			if k.Release != 0 || jobHas[k.Name] {
				continue
			}
			if w := c.parent[k.Name]; w.jar != int32(ji) || w.class != int32(ci) {
				continue // shadowed by an earlier jar: never loaded
			}
			if n++; n%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			referrer := k.Name
			err := j.ClassRefs(k, func(ref []byte) {
				if !a.dupByName[string(ref)] {
					return
				}
				name := strings.ReplaceAll(string(ref), "/", ".")
				rs := a.referrers[name]
				if len(rs) < 3 && (len(rs) == 0 || rs[len(rs)-1] != referrer) {
					a.referrers[name] = append(rs, referrer+" ("+"lib/"+c.libNames[ji]+")")
				}
			})
			if err != nil {
				return &InputError{Path: j.Path, Err: err}
			}
		}
	}
	return nil
}

func (a *analysis) add(id string, sev findings.Severity, msg, fix string, d *pb.ClasspathFindingDetail) {
	r := ruleByID(id)
	a.results = append(a.results, result{
		f: findings.Finding{RuleID: id, Title: r.Title, Severity: sev, Message: msg, Remediation: fix, References: r.References},
		d: d,
	})
}

// packagesOf returns the sorted distinct packages of classes, and the number.
func packagesOf(names []string) []string {
	set := map[string]bool{}
	for _, n := range names {
		if i := strings.LastIndexByte(n, '.'); i > 0 {
			set[n[:i]] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func sample(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return xs[:n]
}

func listText(xs []string, n int) string {
	s := strings.Join(sample(xs, n), ", ")
	if len(xs) > n {
		s += fmt.Sprintf(" and %d more", len(xs)-n)
	}
	return s
}

func (a *analysis) jobName() string { return filepath.Base(a.job.Path) }

func (a *analysis) orderText() string {
	if a.c.conf != nil && a.c.conf.ResolveOrder != "" {
		return "classloader.resolve-order: " + a.c.resolveOrder + " (" + filepath.Base(a.c.conf.File) + ")"
	}
	return "classloader.resolve-order: child-first (Flink's default)"
}

func (a *analysis) ruleDuplicates() {
	jars := sortedKeys(a.childDups)
	for _, ji := range jars {
		ds := a.childDups[ji]
		var names, referenced []string
		differ := 0
		for _, d := range ds {
			n := a.job.Classes[d.job].Name
			names = append(names, n)
			if d.differ {
				differ++
			}
			if len(a.referrers[n]) > 0 {
				referenced = append(referenced, n)
			}
		}
		sort.Strings(names)
		// The class most parent classes reference leads (ProducerRecord before KafkaProducer).
		sort.Slice(referenced, func(x, y int) bool {
			rx, ry := len(a.referrers[referenced[x]]), len(a.referrers[referenced[y]])
			if rx != ry {
				return rx > ry
			}
			return referenced[x] < referenced[y]
		})
		libJar := "lib/" + a.c.libNames[ji]
		pkgs := packagesOf(names)
		detail := &pb.ClasspathFindingDetail{Packages: sample(pkgs, 50), Jars: []string{a.jobName(), libJar}, ClassCount: int32(len(names)), Modules: moduleNames(names)}
		bytesText := "identical bytes"
		if differ > 0 {
			bytesText = fmt.Sprintf("%d of them differ in bytes (another version)", differ)
		}
		base := fmt.Sprintf("%d classes in %d packages (%s) are both in the job jar %s and in %s; %s. Under %s user code loads the job jar's copies",
			len(names), len(pkgs), listText(pkgs, 6), a.jobName(), libJar, bytesText, a.orderText())
		if len(referenced) > 0 {
			var lines []string
			for _, n := range sample(referenced, 8) {
				lines = append(lines, n+" ← referenced by "+strings.Join(a.referrers[n], ", "))
			}
			detail.Classes = sample(referenced, 50)
			msg := base + ", but classes loaded by the parent class loader link against " + libJar + "'s copies:\n  " +
				strings.Join(lines, "\n  ") + "\nWhen an object crosses between them (for example the job's serialization schema hands a " +
				shortName(referenced[0]) + " to a parent-loaded Flink class) the JVM has two classes of one name: java.lang.LinkageError: loader constraint violation, or ClassCastException \"" +
				shortName(referenced[0]) + " cannot be cast to " + shortName(referenced[0]) + "\"."
			fix := fmt.Sprintf("Keep one copy of %s. Either remove %s (and the Flink modules using it) from lib/ and ship it only in the job jar, as Flink recommends for connectors and their clients; or exclude it from the job jar (Maven <scope>provided</scope>, Gradle compileOnly) so lib/'s copy serves both sides; or relocate %s in the job jar with the shade plugin. Switching classloader.resolve-order to parent-first only hides this (see PF308).",
				listText(pkgs, 3), libJar, commonPrefix(pkgs))
			a.add(RuleDuplicateReferenced, findings.Error, msg, fix, detail)
			continue
		}
		sev := findings.Info
		if differ > 0 {
			sev = findings.Warning
		}
		detail.Classes = sample(names, 50)
		msg := base + "; " + libJar + "'s copies serve Flink's side. No parent-loaded class references them, so this breaks only when an object crosses loaders (reflection, ServiceLoader, Class.forName with the context class loader)."
		what := listText(moduleNames(names), 3)
		if what == "" { // no known module: name the packages
			what = "the classes of " + listText(pkgs, 3)
		}
		fix := fmt.Sprintf("Remove the duplicate: exclude %s from the job jar (provided scope) if lib/'s version suits the job, or remove it from lib/ if only jobs use it.", what)
		a.add(RuleDuplicate, sev, msg, fix, detail)
	}
}

func shortName(class string) string {
	if i := strings.LastIndexByte(class, '.'); i >= 0 {
		return class[i+1:]
	}
	return class
}

// commonPrefix of packages, at most three segments ("org.apache.kafka").
func commonPrefix(pkgs []string) string {
	if len(pkgs) == 0 {
		return ""
	}
	segs := strings.Split(pkgs[0], ".")
	n := len(segs)
	for _, p := range pkgs[1:] {
		s := strings.Split(p, ".")
		i := 0
		for i < n && i < len(s) && s[i] == segs[i] {
			i++
		}
		n = i
	}
	if n == 0 {
		return pkgs[0]
	}
	if n > 3 && len(pkgs) > 1 {
		n = 3
	}
	return strings.Join(segs[:n], ".")
}

func moduleNames(classes []string) []string {
	set := map[string]bool{}
	for _, c := range classes {
		if m := ModuleOf(c); m != nil {
			set[m.Name] = true
		}
	}
	return sortedKeys(set)
}

// artifactsFor returns the job jar's pom.properties artifacts that look like the module.
func (a *analysis) artifactsFor(module string) []jarindex.Artifact {
	var out []jarindex.Artifact
	for _, art := range a.job.Artifacts {
		id := art.ArtifactID
		if s := scalaSuffix(id); s != "" {
			id = strings.TrimSuffix(id, "_"+s)
		}
		if id == module {
			out = append(out, art)
		}
	}
	return out
}

func artifactText(arts []jarindex.Artifact) string {
	var parts []string
	for _, a := range arts {
		parts = append(parts, a.GroupID+":"+a.ArtifactID+":"+a.Version)
	}
	return strings.Join(parts, ", ")
}

func (a *analysis) ruleDead() {
	var provided, other []string
	for _, m := range sortedKeys(a.dead) {
		if mod := moduleByName(m); mod != nil && mod.Provided {
			provided = append(provided, m)
		} else {
			other = append(other, m)
		}
	}
	emit := func(mods []string, providedModules bool) {
		if len(mods) == 0 {
			return
		}
		var lines, names, jars []string
		total, differ := 0, 0
		jarSet := map[string]bool{}
		for _, m := range mods {
			ds := a.dead[m]
			d := 0
			modJars := map[string]bool{}
			for _, x := range ds {
				names = append(names, a.job.Classes[x.job].Name)
				if x.differ {
					d++
				}
				modJars[a.c.libJar(x.parent)] = true
				jarSet[a.c.libJar(x.parent)] = true
			}
			total += len(ds)
			differ += d
			line := fmt.Sprintf("%s: %s (%s), provided by %s", m, plural(len(ds), "class"), listText(packagesOf(classNames(a.job, ds)), 2), strings.Join(sortedKeys(modJars), ", "))
			if arts := a.artifactsFor(m); len(arts) > 0 {
				line += "; bundled as " + artifactText(arts)
			}
			if d > 0 {
				line += fmt.Sprintf("; %d differ from the cluster's", d)
			}
			lines = append(lines, line)
		}
		jars = sortedKeys(jarSet)
		detail := &pb.ClasspathFindingDetail{Modules: mods, Packages: sample(packagesOf(names), 50), Classes: sample(names, 50), Jars: append([]string{a.jobName()}, jars...), ClassCount: int32(total)}
		msg := fmt.Sprintf("The job jar %s bundles %d classes that the cluster already provides and that Flink always loads parent-first (patterns %s):\n  %s\nThe job jar's copies are never loaded: they only make the jar bigger, and the other classes those modules pulled into the job jar (their dependencies) now run next to the cluster's version of the module",
			a.jobName(), total, listText(matchingPatterns(a.c.patterns, names), 4), strings.Join(lines, "\n  "))
		if differ > 0 {
			msg += fmt.Sprintf(". %d classes differ: the job was built against another version than the one it runs with (NoSuchMethodError, AbstractMethodError)", differ)
		}
		msg += "."
		var fix string
		if providedModules {
			fix = fmt.Sprintf("Declare %s with <scope>provided</scope> (Gradle compileOnly) so they are not shaded into the job jar; the cluster's lib/ supplies them. Build against the cluster's Flink version%s.", strings.Join(mods, ", "), a.versionSuffix())
		} else {
			fix = fmt.Sprintf("%s is on the cluster's class path (%s) and always loaded from there: exclude it from the job jar (provided scope). If it is a connector only some jobs need, remove it from lib/ instead and bundle it in those jobs (connectors belong in the job jar); having it in both places is what feeds PF301.", strings.Join(mods, ", "), strings.Join(jars, ", "))
		}
		a.add(RuleProvidedBundled, findings.Warning, msg, fix, detail)
	}
	emit(provided, true)
	emit(other, false)
}

// packageGroup names the group of a class that no known module owns: its first two package
// segments, "com.fasterxml.*" (the whole package when it has one segment).
func packageGroup(class string) string {
	parts := strings.Split(class, ".")
	switch len(parts) {
	case 1:
		return "(default package)"
	case 2:
		return parts[0] + ".*"
	}
	return parts[0] + "." + parts[1] + ".*"
}

func (a *analysis) versionSuffix() string {
	if a.c.version.Major == 0 {
		return ""
	}
	return " (" + a.c.version.String() + ")"
}

func classNames(job *jarindex.Jar, ds []dup) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = job.Classes[d.job].Name
	}
	return out
}

func matchingPatterns(patterns, names []string) []string {
	set := map[string]bool{}
	for _, n := range names {
		for _, p := range patterns {
			if strings.HasPrefix(n, p) {
				set[p] = true
				break
			}
		}
	}
	return sortedKeys(set)
}

func moduleByName(name string) *Module {
	for i := range modules {
		if modules[i].Name == name {
			return &modules[i]
		}
	}
	return nil
}

func (a *analysis) ruleFallback() {
	for _, m := range sortedKeys(a.fallback) {
		idx := a.fallback[m]
		names := make([]string, len(idx))
		for i, x := range idx {
			names[i] = a.job.Classes[x].Name
		}
		sort.Strings(names)
		arts := a.artifactsFor(m)
		sev := findings.Info
		versionNote := ""
		if a.c.version.Major != 0 {
			for _, art := range arts {
				if v, ok := flinkVersionOfArtifact(art.Version); ok && (v.Major != a.c.version.Major || v.Minor != a.c.version.Minor) {
					sev = findings.Warning
					versionNote = fmt.Sprintf(" It is built for Flink %d.%d (%s) but the cluster runs %s: Flink's internal APIs change between minor versions.", v.Major, v.Minor, art.ArtifactID+":"+art.Version, a.c.version)
				}
			}
		}
		bundled := ""
		if len(arts) > 0 {
			bundled = " (" + artifactText(arts) + ")"
		}
		msg := fmt.Sprintf("%s%s is bundled in the job jar (%s in %s). The cluster's class path does not have it, so although its classes match the parent-first pattern org.apache.flink., they load from the job jar after the parent misses. That is how connectors and libraries such as flink-cep are meant to ship.%s",
			m, bundled, plural(len(names), "class"), listText(packagesOf(names), 3), versionNote)
		fix := "Nothing to do if it is built for the cluster's Flink version" + a.versionSuffix() + "; keep its version equal to the cluster's."
		if sev == findings.Warning {
			fix = "Build the job against the cluster's Flink version" + a.versionSuffix() + " (same version of " + m + ")."
		}
		a.add(RuleFlinkModuleBundled, sev, msg, fix, &pb.ClasspathFindingDetail{Modules: []string{m}, Packages: packagesOf(names), Classes: sample(names, 50), Jars: []string{a.jobName()}, ClassCount: int32(len(names))})
	}
}

// flinkVersionOfArtifact reads "1.9.1", or "3.0.1-1.17" (externalised connectors name the Flink
// version after the dash).
func flinkVersionOfArtifact(v string) (Version, bool) {
	if i := strings.LastIndex(v, "-1."); i >= 0 {
		return ParseVersion(v[i+1:])
	}
	if pv, ok := ParseVersion(v); ok && pv.Major == 1 {
		return pv, true
	}
	return Version{}, false
}

func (a *analysis) rulePlugins() {
	for _, m := range sortedKeys(a.plugins) {
		idx := a.plugins[m]
		mod := moduleByName(m)
		names := make([]string, len(idx))
		for i, x := range idx {
			names[i] = a.job.Classes[x].Name
		}
		sort.Strings(names)
		where := a.clusterHas(mod)
		bundled := ""
		if arts := a.artifactsFor(m); len(arts) > 0 {
			bundled = " (" + artifactText(arts) + ")"
		}
		msg := fmt.Sprintf("%s%s, a %s plugin, is bundled in the job jar (%s in %s). Flink sets up %ss once per process from lib/ and plugins/ (a separate class loader per plugin folder) before any job is loaded; the job jar's copy never serves the cluster's %s, and its classes match the parent-first pattern org.apache.flink., so they are either dead copies or a second copy next to the plugin, with a second shaded Hadoop/AWS SDK.",
			m, bundled, mod.Plugin, plural(len(names), "class"), listText(packagesOf(names), 2), mod.Plugin, pluginUse(mod))
		if where != "" {
			msg += " The cluster has it in " + where + "."
		} else {
			msg += " The cluster has it neither in lib/ nor in plugins/: " + pluginMissing(mod)
		}
		fix := fmt.Sprintf("Remove %s from the job's dependencies (or <scope>provided</scope>) and install it on the cluster as a plugin: plugins/%s/%s-%s.jar (copied from opt/).", m, strings.TrimPrefix(m, "flink-"), m, orX(a.c.version.String()))
		a.add(RulePluginBundled, findings.Warning, msg, fix, &pb.ClasspathFindingDetail{Modules: []string{m}, Packages: packagesOf(names), Classes: sample(names, 50), Jars: []string{a.jobName()}, ClassCount: int32(len(names))})
	}
}

func orX(s string) string {
	if s == "" {
		return "VERSION"
	}
	return s
}

func pluginUse(m *Module) string {
	if m.Plugin == "file system" {
		return "checkpoint and savepoint paths"
	}
	return "metrics"
}

func pluginMissing(m *Module) string {
	if m.Plugin == "file system" {
		return "paths of its scheme fail with UnsupportedFileSystemSchemeException whatever the job jar contains."
	}
	return "the reporter configured in the cluster's configuration is not found whatever the job jar contains."
}

// clusterHas says where the cluster provides a plugin module: "plugins/s3-fs-hadoop" or a lib jar.
func (a *analysis) clusterHas(m *Module) string {
	for _, p := range a.c.plugins {
		for _, j := range p.jars {
			if jarHasPackage(j, m.Packages) {
				return "plugins/" + p.name + "/" + filepath.Base(j.Path)
			}
		}
	}
	for i, j := range a.c.lib {
		if jarHasPackage(j, m.Packages) {
			return "lib/" + a.c.libNames[i]
		}
	}
	return ""
}

func jarHasPackage(j *jarindex.Jar, prefixes []string) bool {
	for i := range j.Classes {
		for _, p := range prefixes {
			if strings.HasPrefix(j.Classes[i].Name, p) {
				return true
			}
		}
	}
	return false
}

func (a *analysis) ruleScala() {
	jobVersions := map[string][]string{} // binary version → artifacts
	for _, art := range a.job.Artifacts {
		if s := scalaSuffix(art.ArtifactID); s != "" {
			jobVersions[s] = append(jobVersions[s], art.ArtifactID+":"+art.Version)
		}
	}
	if a.job.ScalaVersion != "" {
		b := scalaBinary(a.job.ScalaVersion)
		jobVersions[b] = append(jobVersions[b], "scala-library "+a.job.ScalaVersion+" (bundled)")
	}
	vs := sortedKeys(jobVersions)
	cluster := a.c.scala
	var wrong []string
	for _, v := range vs {
		if (cluster != "" && v != cluster) || (cluster == "" && len(vs) > 1) {
			wrong = append(wrong, v)
		}
	}
	if len(wrong) == 0 {
		return
	}
	var parts []string
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("Scala %s: %s", v, listText(jobVersions[v], 5)))
	}
	msg := "The job jar is built for " + strings.Join(parts, "; ")
	if cluster != "" {
		msg += fmt.Sprintf(". The cluster runs Scala %s (lib/). scala.* classes always load parent-first, so the job's Scala-compiled classes run against Scala %s: NoSuchMethodError, AbstractMethodError or ClassNotFoundException at the first Scala call.", cluster, cluster)
	} else {
		msg += ". Mixed Scala binary versions in one jar cannot all work."
	}
	target := cluster
	if target == "" {
		target = "one Scala version"
	}
	fix := fmt.Sprintf("Build every Scala-suffixed dependency with the cluster's Scala binary version (_%s artifacts), and keep scala-library out of the job jar (provided).", target)
	a.add(RuleScalaMismatch, findings.Error, msg, fix, &pb.ClasspathFindingDetail{Modules: vs, Jars: []string{a.jobName()}})
}

func (a *analysis) ruleJava() {
	java := a.in.JavaVersion
	if java <= 0 {
		return
	}
	limit := uint16(java + 44)
	byRelease := map[int][]string{}
	total := 0
	for i := range a.job.Classes {
		cl := &a.job.Classes[i]
		if cl.Release > java {
			continue // multi-release variant the JVM ignores
		}
		if cl.Major > limit {
			r := javaRelease(cl.Major)
			byRelease[r] = append(byRelease[r], cl.Name)
			total++
		}
	}
	if total == 0 {
		return
	}
	var parts, names []string
	rels := make([]int, 0, len(byRelease))
	for r := range byRelease {
		rels = append(rels, r)
	}
	sort.Ints(rels)
	for _, r := range rels {
		sort.Strings(byRelease[r])
		parts = append(parts, fmt.Sprintf("%d for Java %d (class file version %d): %s", len(byRelease[r]), r, r+44, listText(packagesOf(byRelease[r]), 4)))
		names = append(names, byRelease[r]...)
	}
	msg := fmt.Sprintf("%d classes of the job jar are compiled for a newer Java than the cluster's Java %d (class file version %d at most): %s. Loading them fails with java.lang.UnsupportedClassVersionError.",
		total, java, limit, strings.Join(parts, "; "))
	fix := fmt.Sprintf("Compile with --release %d (maven.compiler.release), and use dependency versions that support Java %d; or run the cluster on Java %d or newer.", java, java, rels[len(rels)-1])
	a.add(RuleJavaVersion, findings.Error, msg, fix, &pb.ClasspathFindingDetail{Packages: sample(packagesOf(names), 50), Classes: sample(names, 50), Jars: []string{a.jobName()}, ClassCount: int32(total)})
}

// duplicatedClasses lists the job classes of dups (by lib jar), the lib jars holding them, and
// how many differ in bytes.
func (a *analysis) duplicatedClasses(dups map[int32][]dup) (names, jars []string, differ int) {
	for _, ji := range sortedKeys(dups) {
		jars = append(jars, "lib/"+a.c.libNames[ji])
		for _, d := range dups[ji] {
			names = append(names, a.job.Classes[d.job].Name)
			if d.differ {
				differ++
			}
		}
	}
	return names, jars, differ
}

func (a *analysis) ruleResolveOrder() {
	if a.c.resolveOrder == "parent-first" {
		if len(a.shadowed) == 0 {
			return
		}
		names, jars, differ := a.duplicatedClasses(a.shadowed)
		sort.Strings(names)
		sev := findings.Info
		if differ > 0 {
			sev = findings.Warning
		}
		msg := fmt.Sprintf("classloader.resolve-order is parent-first: %d job classes that %s also contain (%s) are never loaded from the job jar; the job runs with the cluster's copies, %d of which differ in bytes (other versions). This avoids LinkageErrors between the two copies, at that price.",
			len(names), strings.Join(jars, ", "), listText(packagesOf(names), 5), differ)
		fix := "Align the versions (exclude these dependencies from the job jar, or make the job jar's versions equal to lib/'s). To let the job use its own versions, go back to child-first after removing the conflicting jars from lib/."
		a.add(RuleResolveOrder, sev, msg, fix, &pb.ClasspathFindingDetail{Packages: sample(packagesOf(names), 50), Classes: sample(names, 50), Jars: jars, ClassCount: int32(len(names))})
		return
	}
	if len(a.childDups) == 0 {
		return
	}
	names, jars, differ := a.duplicatedClasses(a.childDups)
	differText := "here the copies are identical, but wherever they differ the job gets NoSuchMethodError or changed behaviour"
	if differ > 0 {
		differText = fmt.Sprintf("%d of these classes differ: NoSuchMethodError where the job needs its own version's API", differ)
	}
	msg := fmt.Sprintf("With classloader.resolve-order: parent-first the %d duplicated classes (%s) would come from %s for user code too, so both sides would share one copy and the LinkageError/ClassCastException of PF301/PF302 would disappear: that is why switching the resolve order appears to fix it. The cost: parent-first applies to every class, so the job silently runs against lib/'s versions of everything both sides have (%s), the job can no longer override any dependency of Flink's class path, and the cause stays in place for the next job.",
		len(names), listText(packagesOf(names), 3), strings.Join(jars, ", "), differText)
	fix := "Fix the duplicate (PF301/PF302) instead of changing the resolve order; if a library must stay in lib/, add only its packages to classloader.parent-first-patterns.additional."
	a.add(RuleResolveOrder, findings.Info, msg, fix, &pb.ClasspathFindingDetail{Packages: sample(packagesOf(names), 50), Jars: jars, ClassCount: int32(len(names))})
}

func (a *analysis) ruleNested() {
	if len(a.job.Nested) == 0 {
		return
	}
	msg := fmt.Sprintf("The job jar contains %d jar or zip files (%s). Flink's user-code class loader reads the job jar's own entries only; classes inside nested jars are not on the class path (ClassNotFoundException), unlike a Spring Boot fat jar.",
		len(a.job.Nested), listText(a.job.Nested, 5))
	fix := "Build an uber jar with the shade plugin (or Gradle shadow) so dependencies are unpacked into the jar, or pass extra jars with -C/--classpath or pipeline.classpaths."
	a.add(RuleNestedJars, findings.Warning, msg, fix, &pb.ClasspathFindingDetail{Jars: sample(a.job.Nested, 50)})
}

// ruleSigned checks the signature files against the manifest the way the JVM does first: the
// whole-manifest digest, then the main-attributes digest.
func (a *analysis) ruleSigned() error {
	if len(a.job.Signatures) == 0 {
		return nil
	}
	var broken []string
	for _, sig := range a.job.Signatures {
		if !strings.HasSuffix(strings.ToUpper(sig), ".SF") {
			continue
		}
		var ent *jarindex.Entry
		for i := range a.job.Archive.Entries {
			if a.job.Archive.Entries[i].Name == sig {
				ent = &a.job.Archive.Entries[i]
				break
			}
		}
		if ent == nil || ent.UncompressedSize > 1<<20 {
			continue
		}
		sf, err := a.job.Archive.ReadAll(ent)
		if err != nil {
			return &InputError{Path: a.job.Path, Err: err}
		}
		if !manifestMatches(sf, a.job.Manifest) {
			broken = append(broken, sig)
		}
	}
	if len(broken) == 0 {
		return nil
	}
	msg := fmt.Sprintf("The job jar carries signature files %s whose digests no longer match its META-INF/MANIFEST.MF (typical of an uber jar that kept a signed dependency's META-INF/*.SF). Opening the jar fails with java.lang.SecurityException: Invalid signature file digest for Manifest main attributes, before any class loads.",
		listText(broken, 4))
	fix := "Exclude META-INF/*.SF, META-INF/*.DSA, META-INF/*.RSA and META-INF/*.EC in the shade plugin's <filters> (artifact *:*), or sign the final jar yourself."
	a.add(RuleSignedJar, findings.Error, msg, fix, &pb.ClasspathFindingDetail{Jars: append([]string{a.jobName()}, broken...)})
	return nil
}

// manifestMatches reports whether a .SF file's manifest digest (or main-attributes digest)
// matches the manifest.
func manifestMatches(sf, manifest []byte) bool {
	main := manifest
	if i := strings.Index(string(manifest), "\r\n\r\n"); i >= 0 {
		main = manifest[:i+4]
	} else if i := strings.Index(string(manifest), "\n\n"); i >= 0 {
		main = manifest[:i+2]
	}
	checked := false
	for _, line := range strings.Split(strings.ReplaceAll(string(sf), "\r\n", "\n"), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			if line == "" {
				break // end of the SF main section
			}
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		alg, what, ok := strings.Cut(k, "-Digest-")
		if !ok {
			continue
		}
		var h hash.Hash
		switch strings.ToUpper(alg) {
		case "SHA1", "SHA-1":
			h = sha1.New()
		case "SHA-256":
			h = sha256.New()
		case "SHA-384":
			h = sha512.New384()
		case "SHA-512":
			h = sha512.New()
		default:
			continue
		}
		var data []byte
		switch what {
		case "Manifest":
			data = manifest
		case "Manifest-Main-Attributes":
			data = main
		default:
			continue
		}
		h.Write(data)
		checked = true
		if base64.StdEncoding.EncodeToString(h.Sum(nil)) == v {
			return true
		}
	}
	return !checked // a .SF without manifest digests: nothing the JVM would check first
}

// pluginParts are modules that only exist shaded inside a file system plugin: when the job jar
// bundles the plugin itself, their classes are reported with it rather than as plugins of their
// own.
var pluginParts = map[string]bool{"flink-s3-fs-base": true, "flink-hadoop-fs (shaded in the file system plugins)": true}

func (a *analysis) mergePluginParts() {
	var owner string
	for _, m := range sortedKeys(a.plugins) {
		if mod := moduleByName(m); mod != nil && mod.Plugin == "file system" && !pluginParts[m] {
			owner = m
			break
		}
	}
	if owner == "" {
		return
	}
	for part := range pluginParts {
		if idx, ok := a.plugins[part]; ok {
			a.plugins[owner] = append(a.plugins[owner], idx...)
			delete(a.plugins, part)
		}
	}
}

// plural renders "1 class", "3 classes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// sortedKeys returns m's keys in order, so that findings do not depend on map order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K { return slices.Sorted(maps.Keys(m)) }

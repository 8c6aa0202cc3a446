// Package classpathtest builds, for tests, the Flink 1.9 cluster and the job jar of the
// classloading incident behind issue #13, from real class files (internal/jarindex/jartest).
package classpathtest

import (
	"errors"
	"path/filepath"

	"github.com/flinkpreflight/preflight/internal/jarindex/jartest"
)

// Class names of the seed incident (Flink 1.9, Scala 2.12).
const (
	ProducerRecord           = "org.apache.kafka.clients.producer.ProducerRecord"
	KafkaProducer            = "org.apache.kafka.clients.producer.KafkaProducer"
	FlinkKafkaProducer       = "org.apache.flink.streaming.connectors.kafka.FlinkKafkaProducer"
	KafkaSerializationSchema = "org.apache.flink.streaming.connectors.kafka.KafkaSerializationSchema"
	TwoPhaseCommitSink       = "org.apache.flink.streaming.api.functions.sink.TwoPhaseCommitSinkFunction"
	StreamEnvironment        = "org.apache.flink.streaming.api.environment.StreamExecutionEnvironment"
	StreamPlanner            = "org.apache.flink.table.planner.StreamPlanner"
	TableEnvironment         = "org.apache.flink.table.api.TableEnvironment"
	ScalaTableEnv            = "org.apache.flink.table.api.scala.StreamTableEnvironment"
	JobClusterEntry          = "org.apache.flink.container.entrypoint.StandaloneJobClusterEntryPoint"
	S3FileSystemFactory      = "org.apache.flink.fs.s3hadoop.S3FileSystemFactory"
)

// KafkaClients are kafka-clients 2.2.0 classes (what flink-connector-kafka 1.9 depends on).
var KafkaClients = []jartest.Class{
	{Name: ProducerRecord},
	{Name: KafkaProducer, Refs: []string{ProducerRecord, "org.apache.kafka.clients.producer.Producer"}},
	{Name: "org.apache.kafka.clients.producer.Producer", SigRefs: []string{"java.util.concurrent.Future", ProducerRecord}},
	{Name: "org.apache.kafka.common.serialization.ByteArraySerializer"},
}

// KafkaConnector are flink-connector-kafka_2.12 1.9.1 classes: FlinkKafkaProducer creates
// ProducerRecords through the user's KafkaSerializationSchema and hands them to KafkaProducer,
// so its constant pool names both.
var KafkaConnector = []jartest.Class{
	{Name: FlinkKafkaProducer, Super: TwoPhaseCommitSink, Refs: []string{KafkaProducer, ProducerRecord, KafkaSerializationSchema}},
	{Name: KafkaSerializationSchema, SigRefs: []string{ProducerRecord, "java.lang.Object", "java.lang.Long"}},
}

// SeedCluster writes, under home, a Flink 1.9.1 (Scala 2.12) installation shaped like the seed's:
//
//   - lib/flink-dist_2.12-1.9.1.jar: Flink's runtime and APIs, flink-container's job-cluster
//     entry point and the Scala library (flink-dist is a fat jar), with library.properties;
//   - lib/flink-table_2.12-1.9.1.jar: the table planner and API bridges, as 1.9 ships them;
//   - lib/flink-connector-kafka_2.12-1.9.1.jar and lib/kafka-clients-2.2.0.jar: NOT part of the
//     distribution. The seed's LinkageError names ProducerRecord being loaded by two loaders for
//     FlinkKafkaProducer, which can only happen when FlinkKafkaProducer itself is loaded by the
//     parent (it matches the parent-first pattern org.apache.flink.) and links against a
//     parent copy of kafka-clients, while the job's own classes (its KafkaSerializationSchema)
//     were loaded child-first with the job jar's copy. So someone had put the Kafka connector
//     and kafka-clients into lib/ (for the SQL client or another job), as modelled here;
//   - log4j and the slf4j binding, as 1.9's lib/ has them;
//   - plugins/s3-fs-hadoop/flink-s3-fs-hadoop-1.9.1.jar (1.9 ships it in opt/; plugins/ is
//     where the docs tell you to put it).
func SeedCluster(home string) (lib, plugins string, err error) {
	lib, plugins = filepath.Join(home, "lib"), filepath.Join(home, "plugins")
	var errs []error
	must := func(err error) { errs = append(errs, err) }
	dist := jartest.Jar{}.AddClasses(
		jartest.Class{Name: "org.apache.flink.api.common.functions.MapFunction"},
		jartest.Class{Name: "org.apache.flink.streaming.api.functions.sink.RichSinkFunction"},
		jartest.Class{Name: TwoPhaseCommitSink, Super: "org.apache.flink.streaming.api.functions.sink.RichSinkFunction"},
		jartest.Class{Name: StreamEnvironment},
		jartest.Class{Name: "org.apache.flink.runtime.jobgraph.JobGraph"},
		jartest.Class{Name: "org.apache.flink.core.fs.FileSystem"},
		jartest.Class{Name: JobClusterEntry},
		jartest.Class{Name: "scala.Function1"},
	)
	dist["library.properties"] = []byte("version.number=2.12.7\n")
	must(jartest.WriteJar(filepath.Join(lib, "flink-dist_2.12-1.9.1.jar"), dist))
	must(jartest.WriteJar(filepath.Join(lib, "flink-table_2.12-1.9.1.jar"), jartest.Jar{}.AddClasses(
		jartest.Class{Name: TableEnvironment}, jartest.Class{Name: StreamPlanner, Refs: []string{TableEnvironment}}, jartest.Class{Name: ScalaTableEnv},
	)))
	must(jartest.WriteJar(filepath.Join(lib, "flink-connector-kafka_2.12-1.9.1.jar"), jartest.Jar{}.AddClasses(KafkaConnector...)))
	must(jartest.WriteJar(filepath.Join(lib, "kafka-clients-2.2.0.jar"), jartest.Jar{}.AddClasses(KafkaClients...)))
	must(jartest.WriteJar(filepath.Join(lib, "log4j-1.2.17.jar"), jartest.Jar{}.AddClasses(jartest.Class{Name: "org.apache.log4j.Logger"})))
	must(jartest.WriteJar(filepath.Join(lib, "slf4j-log4j12-1.7.15.jar"), jartest.Jar{}.AddClasses(jartest.Class{Name: "org.slf4j.impl.StaticLoggerBinder"})))
	must(jartest.WriteJar(filepath.Join(plugins, "s3-fs-hadoop", "flink-s3-fs-hadoop-1.9.1.jar"), jartest.Jar{}.AddClasses(jartest.Class{Name: S3FileSystemFactory})))
	return lib, plugins, errors.Join(errs...)
}

// SeedJobJar writes, in dir, the seed's uber jar: the job, plus flink-connector-kafka with kafka-clients,
// flink-table-planner, flink-table-api-scala-bridge, flink-s3-fs-hadoop, flink-container and
// flink-cep shaded in without provided scope (their pom.properties kept, as the shade plugin
// does).
func SeedJobJar(dir string) (string, error) {
	j := jartest.Jar{}.AddClasses(
		jartest.Class{Name: "com.example.orders.OrdersJob", Refs: []string{StreamEnvironment, FlinkKafkaProducer, "com.example.orders.OrderSchema"}},
		// The job's schema returns the job jar's ProducerRecord to the parent's FlinkKafkaProducer.
		jartest.Class{Name: "com.example.orders.OrderSchema", Refs: []string{KafkaSerializationSchema}, SigRefs: []string{ProducerRecord, "com.example.orders.Order", "java.lang.Long"}},
		jartest.Class{Name: "com.example.orders.Order"},
	).AddClasses(KafkaConnector...).AddClasses(KafkaClients...).AddClasses(
		jartest.Class{Name: TableEnvironment}, jartest.Class{Name: StreamPlanner, Refs: []string{TableEnvironment}}, jartest.Class{Name: ScalaTableEnv},
		jartest.Class{Name: S3FileSystemFactory},
		jartest.Class{Name: "org.apache.flink.fs.s3base.shaded.com.amazonaws.services.s3.AmazonS3Client"},
		jartest.Class{Name: JobClusterEntry},
		jartest.Class{Name: "org.apache.flink.cep.CEP"}, jartest.Class{Name: "org.apache.flink.cep.pattern.Pattern"},
	).
		AddPom("org.apache.flink", "flink-connector-kafka_2.12", "1.9.1").
		AddPom("org.apache.kafka", "kafka-clients", "2.2.0").
		AddPom("org.apache.flink", "flink-table-planner_2.12", "1.9.1").
		AddPom("org.apache.flink", "flink-table-api-scala-bridge_2.12", "1.9.1").
		AddPom("org.apache.flink", "flink-s3-fs-hadoop", "1.9.1").
		AddPom("org.apache.flink", "flink-container_2.12", "1.9.1").
		AddPom("org.apache.flink", "flink-cep_2.12", "1.9.1")
	j["META-INF/services/org.apache.flink.core.fs.FileSystemFactory"] = []byte(S3FileSystemFactory + "\n")
	p := filepath.Join(dir, "orders-job-1.0.jar")
	return p, jartest.WriteJar(p, j)
}

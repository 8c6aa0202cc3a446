package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/flinkpreflight/preflight/client"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// An autoscaler's pre-flight call: may the job restart from this checkpoint at parallelism 8?
func ExampleClient_Check() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "preflightd.flink.svc:8443", client.Options{CAFile: "/etc/preflight/ca.pem"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	report, err := c.Check(ctx, &pb.CheckRescaleRequest{
		Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: "s3://checkpoints/job-1/chk-42"}},
		Plan:       &pb.RescalePlan{DefaultParallelism: 8},
	})
	if err != nil {
		log.Fatal(err) // status codes: INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED, ...
	}
	if report.GetVerdict() == pb.Verdict_VERDICT_DENY {
		for _, f := range report.GetFindings() {
			fmt.Println(f.GetRuleId(), f.GetMessage())
		}
	}
}

// A local _metadata the server cannot read is streamed to it.
func ExampleClient_CheckFile() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "127.0.0.1:8443", client.Options{Insecure: true})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	report, err := c.CheckFile(ctx, "/savepoints/savepoint-1a2b3c", &pb.RescalePlan{
		VertexParallelism: map[string]int32{"compact-operator": 8},
	}, &pb.CheckOptions{FlinkVersion: "1.19.1"}, func(sent int64) { log.Printf("%d bytes sent", sent) })
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(report.GetVerdict())
}

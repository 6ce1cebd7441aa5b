package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/connectd/connectd/broker/brokertest"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The protocol conformance suite (issue 18): the same Kafka requests, each
// at a fixed version, sent to the embedded broker and to a real Apache
// Kafka 4.3, their answers normalized (ids, hosts, ports, timings and the
// cluster id masked, lists keyed by name) and compared field by field.
// Every difference must be in conformanceAllowed, with its reason, and
// every entry there must still be seen (a fixed difference leaves the
// list).

// conformanceAllowed are the known differences: the step, a regexp on the
// field's path, and why.
var conformanceAllowed = []struct {
	step, path, reason string
}{
	{"ApiVersions", `^ApiKeys\[`, "the embedded broker (franz-go kfake) supports older versions of many APIs than Kafka 4.3 and some newer ones, and not delegation tokens (38-41), DescribeQuorum (55), the KRaft/controller APIs and streams groups (64, 80-89); checked separately: each API both serve overlaps"},
	{"ApiVersions", `^SupportedFeatures\[(metadata|share)\.version\]\.MaxVersion$`, "kfake advertises Kafka 4.4's feature table (kversion.Stable): metadata.version up to 33, share.version up to 2"},
	{"ApiVersions", `^FinalizedFeatures`, "the finalized feature levels are the cluster's (Kafka 4.4's table in kfake, incl. kraft.version 1; a fresh Kafka 4.3 at metadata.version 30), and the features epoch counts the cluster's metadata changes"},
	{"CreateTopics|DescribeConfigs|DescribeConfigsNamed", `\.Configs\[(compression\.(gzip|lz4|zstd)\.level|file\.delete\.delay\.ms|flush\.(messages|ms)|(follower|leader)\.replication\.throttled\.replicas|index\.interval\.bytes|local\.retention\.(bytes|ms)|max\.compaction\.lag\.ms|message\.timestamp\.(after|before)\.max\.ms|min\.cleanable\.dirty\.ratio|min\.compaction\.lag\.ms|preallocate|remote\.log\.(copy|delete\.on)\.disable|remote\.storage\.enable|segment\.index\.bytes|segment\.jitter\.ms|unclean\.leader\.election\.enable)\]`, "topic configs the embedded broker does not implement: left out rather than described with a value it does not apply"},
	{"CreateTopics|DescribeConfigs|DescribeConfigsNamed", `\.Configs\[segment\.bytes\]\.Value$`, "kfake rolls segments at 100 MiB (its own default), Kafka at 1 GiB"},
	{"CreateTopics|DescribeConfigs|DescribeConfigsNamed", `\.Configs\[min\.insync\.replicas\]\.Source$`, "Kafka 4.3's controller sets min.insync.replicas=1 as a cluster-wide dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG); the embedded broker has it as its default (DEFAULT_CONFIG), the same value"},
	{"CreateTopics|DescribeConfigs|DescribeConfigsNamed", `\.Configs\[max\.message\.bytes\]\.Source$`, "the embedded broker's message.max.bytes is set when it starts (the static broker config of Kafka, STATIC_BROKER_CONFIG, as the test's Kafka sets it in server.properties); kfake reports a broker config as DYNAMIC_BROKER_CONFIG"},
	{"DescribeConfigs|DescribeConfigsNamed|FindCoordinator", `\.ErrorMessage$`, "no error: Kafka sends an empty message, kfake a null one (the Java client reads both as no message)"},
	{"CreateTopicsExisting|DeleteTopics", `\.ErrorMessage$`, "Kafka explains the error in words (\"Topic 'conformance' already exists.\"), kfake sends the code alone"},
}

// conformanceMasked are fields that differ by construction (node ids,
// addresses, ids, timings, the cluster id): masked on both sides.
var conformanceMasked = map[string]bool{
	"ThrottleMillis": true, "UnknownTags": true, "TopicID": true, "ClusterID": true, "ControllerID": true,
	"NodeID": true, "Host": true, "Port": true, "LeaderID": true, "Replicas": true, "ISR": true,
	"FinalizedFeaturesEpoch": true, "Timestamp": true, "MemberID": true, "ClientHost": true,
	"MemberMetadata": true, "MemberAssignment": true, "Brokers": true, "LeaderEpoch": true, "Leader": true,
	// OffsetFetch: the metadata franz-go commits with an offset is its
	// member id.
	"Metadata": true,
}

// conformanceKeys are the fields by which a list's elements are keyed
// (its order is not part of the answer, its members' identity is).
var conformanceKeys = []string{"Name", "Topic", "Group", "ApiKey", "Partition", "ResourceName"}

// flattenAnswer turns a response into field path -> value, lists keyed
// by conformanceKeys (else by position), masked fields left out.
func flattenAnswer(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if conformanceMasked[k] {
				continue
			}
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flattenAnswer(p, e, out)
		}
	case []any:
		if len(x) == 0 {
			out[prefix] = "[]"
			return
		}
		for i, e := range x {
			key := fmt.Sprint(i)
			if m, ok := e.(map[string]any); ok {
				for _, k := range conformanceKeys {
					if kv, ok := m[k]; ok && kv != nil {
						key = fmt.Sprint(kv)
						break
					}
				}
			}
			flattenAnswer(prefix+"["+key+"]", e, out)
		}
	default:
		b, _ := json.Marshal(x)
		out[prefix] = string(b)
	}
}

func answerFields(t *testing.T, resp kmsg.Response) map[string]string {
	t.Helper()
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string)
	flattenAnswer("", v, out)
	return out
}

type conformanceStep struct {
	name string
	req  func() kmsg.Request
	// check, if set, runs on the embedded broker's answer (what the
	// comparison cannot say on its own).
	check func(t *testing.T, embedded, kafka kmsg.Response)
}

func TestBrokerConformanceWithKafka(t *testing.T) {
	embedded := startEmbeddedBrokerForJava(t)
	kafka := startKafkaLikeEmbedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const topic = "conformance"

	createReq := func(name string) func() kmsg.Request {
		return func() kmsg.Request {
			req := kmsg.NewPtrCreateTopicsRequest()
			req.Version = 7
			req.TimeoutMillis = 10000
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 3, -1
			for _, kv := range [][2]string{{"cleanup.policy", "compact"}, {"retention.ms", "86400000"}} {
				c := kmsg.NewCreateTopicsRequestTopicConfig()
				c.Name, c.Value = kv[0], kmsg.StringPtr(kv[1])
				rt.Configs = append(rt.Configs, c)
			}
			req.Topics = append(req.Topics, rt)
			return req
		}
	}
	apiVersions := func(v int16) func() kmsg.Request {
		return func() kmsg.Request {
			req := kmsg.NewPtrApiVersionsRequest()
			req.Version = v
			req.ClientSoftwareName, req.ClientSoftwareVersion = "connectd-conformance", "1"
			return req
		}
	}
	apiRangesOverlap := func(t *testing.T, e, k kmsg.Response) {
		ek := make(map[int16][2]int16)
		for _, a := range e.(*kmsg.ApiVersionsResponse).ApiKeys {
			ek[a.ApiKey] = [2]int16{a.MinVersion, a.MaxVersion}
		}
		var missing []int16
		for _, a := range k.(*kmsg.ApiVersionsResponse).ApiKeys {
			r, ok := ek[a.ApiKey]
			if !ok {
				missing = append(missing, a.ApiKey)
				continue
			}
			if r[0] > a.MaxVersion || r[1] < a.MinVersion {
				t.Errorf("API %s: embedded broker serves v%d-%d, Kafka 4.3 v%d-%d: no version in common", kmsg.NameForKey(a.ApiKey), r[0], r[1], a.MinVersion, a.MaxVersion)
			}
		}
		want := []int16{38, 39, 40, 41, 55, 64, 80, 81, 83, 84, 85, 86, 87, 88, 89}
		if !slices.Equal(missing, want) {
			t.Errorf("APIs of Kafka 4.3 the embedded broker does not serve: %v, want the documented %v", missing, want)
		}
	}
	steps := []conformanceStep{
		{name: "ApiVersions", req: apiVersions(3), check: func(t *testing.T, e, k kmsg.Response) {
			apiRangesOverlap(t, e, k)
			for _, f := range e.(*kmsg.ApiVersionsResponse).SupportedFeatures {
				if f.MinVersion < 1 {
					t.Errorf("v3 supported feature %s from %d (KAFKA-17011)", f.Name, f.MinVersion)
				}
			}
		}},
		{name: "ApiVersions", req: apiVersions(4), check: apiRangesOverlap},
		{name: "CreateTopics", req: createReq(topic)},
		{name: "CreateTopicsExisting", req: createReq(topic)},
		{name: "Metadata", req: func() kmsg.Request {
			req := kmsg.NewPtrMetadataRequest()
			req.Version = 12
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, mt)
			return req
		}},
		{name: "MetadataUnknownTopic", req: func() kmsg.Request {
			req := kmsg.NewPtrMetadataRequest()
			req.Version = 12
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr("no-such-topic")
			req.Topics = append(req.Topics, mt)
			return req
		}},
		{name: "DescribeTopicPartitions", req: func() kmsg.Request {
			req := kmsg.NewPtrDescribeTopicPartitionsRequest()
			rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
			rt.Topic = topic
			req.Topics = append(req.Topics, rt)
			req.ResponsePartitionLimit = 2000
			return req
		}},
		{name: "DescribeConfigs", req: func() kmsg.Request {
			req := kmsg.NewPtrDescribeConfigsRequest()
			req.Version = 4
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
			req.Resources = append(req.Resources, rr)
			return req
		}},
		{name: "ListOffsets", req: func() kmsg.Request {
			req := kmsg.NewPtrListOffsetsRequest()
			req.Version = 8
			req.ReplicaID = -1
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = topic
			for p := int32(0); p < 3; p++ {
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			return req
		}},
		{name: "ListOffsetsEarliest", req: func() kmsg.Request {
			req := kmsg.NewPtrListOffsetsRequest()
			req.Version = 8
			req.ReplicaID = -1
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = topic
			for p := int32(0); p < 3; p++ {
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -2, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			return req
		}},
	}
	// The filters and how many groups each lists: the test's group is a
	// classic one, Empty once its member left.
	for _, filter := range []struct {
		types, states []string
		want          int
	}{{[]string{"Classic"}, nil, 1}, {[]string{"classic"}, nil, 1}, {[]string{"consumer"}, nil, 0}, {nil, []string{"Empty"}, 1}, {nil, []string{"empty"}, 1}, {nil, []string{"stable"}, 0}} {
		steps = append(steps, conformanceStep{name: "ListGroups", req: func() kmsg.Request {
			req := kmsg.NewPtrListGroupsRequest()
			req.Version = 5
			req.TypesFilter, req.StatesFilter = filter.types, filter.states
			return req
		}, check: func(t *testing.T, e, _ kmsg.Response) {
			if n := len(e.(*kmsg.ListGroupsResponse).Groups); n != filter.want {
				t.Errorf("ListGroups types %q states %q: %d groups, want %d", filter.types, filter.states, n, filter.want)
			}
		}})
	}
	steps = append(steps,
		conformanceStep{name: "DescribeGroups", req: func() kmsg.Request {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Version = 5
			req.Groups = []string{"conformance-group", "no-such-group"}
			return req
		}},
		conformanceStep{name: "OffsetFetch", req: func() kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.Version = 8
			g := kmsg.NewOffsetFetchRequestGroup()
			g.Group = "conformance-group"
			req.Groups = append(req.Groups, g)
			return req
		}},
		conformanceStep{name: "FindCoordinator", req: func() kmsg.Request {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.Version = 4
			req.CoordinatorKeys = []string{"conformance-group"}
			return req
		}},
		conformanceStep{name: "IncrementalAlterConfigs", req: func() kmsg.Request {
			req := kmsg.NewPtrIncrementalAlterConfigsRequest()
			req.Version = 1
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Op, c.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("3600000")
			rr.Configs = append(rr.Configs, c)
			req.Resources = append(req.Resources, rr)
			return req
		}},
		conformanceStep{name: "DescribeConfigsNamed", req: func() kmsg.Request {
			req := kmsg.NewPtrDescribeConfigsRequest()
			req.Version = 4
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
			rr.ConfigNames = []string{"retention.ms", "cleanup.policy"}
			req.Resources = append(req.Resources, rr)
			return req
		}},
		conformanceStep{name: "CreatePartitions", req: func() kmsg.Request {
			req := kmsg.NewPtrCreatePartitionsRequest()
			req.Version = 3
			req.TimeoutMillis = 10000
			rt := kmsg.NewCreatePartitionsRequestTopic()
			rt.Topic, rt.Count = topic, 4
			req.Topics = append(req.Topics, rt)
			return req
		}},
		conformanceStep{name: "DeleteGroups", req: func() kmsg.Request {
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.Version = 2
			req.Groups = []string{"conformance-group", "no-such-group"}
			return req
		}},
		conformanceStep{name: "DeleteTopics", req: func() kmsg.Request {
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.Version = 6
			req.TimeoutMillis = 10000
			for _, n := range []string{topic, "no-such-topic"} {
				rt := kmsg.NewDeleteTopicsRequestTopic()
				rt.Topic = kmsg.StringPtr(n)
				req.Topics = append(req.Topics, rt)
			}
			return req
		}},
	)

	// Records and a group with committed offsets on each broker, by the
	// same franz-go client code: 10 keyed records, consumed and committed
	// by a classic group that then leaves (Empty).
	seed := func(addr string) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for i := range 10 {
			r := &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte("v"), Partition: int32(i % 3)}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		g, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("conformance-group"), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for n < 10 {
			fs := g.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("consuming from %s: %d of 10 records", addr, n)
			}
			n += fs.NumRecords()
		}
		if err := g.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatal(err)
		}
		g.LeaveGroup()
		g.Close()
	}

	seen := make([]bool, len(conformanceAllowed))
	compared := 0
	for i, s := range steps {
		if i == 4 { // after the creation, before the reads
			seed(embedded)
			seed(kafka)
		}
		e := brokertest.Request(t, embedded, s.req())
		k := brokertest.Request(t, kafka, s.req())
		if s.check != nil {
			s.check(t, e, k)
		}
		ef, kf := answerFields(t, e), answerFields(t, k)
		var paths []string
		for p := range ef {
			paths = append(paths, p)
		}
		for p := range kf {
			if _, ok := ef[p]; !ok {
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		for _, p := range paths {
			ev, eok := ef[p]
			kv, kok := kf[p]
			if eok && kok && ev == kv {
				compared++
				continue
			}
			allowed := false
			for j, a := range conformanceAllowed {
				if regexp.MustCompile("^("+a.step+")$").MatchString(s.name) && regexp.MustCompile(a.path).MatchString(p) {
					seen[j], allowed = true, true
					break
				}
			}
			if allowed {
				continue
			}
			show := func(v string, ok bool) string {
				if !ok {
					return "(absent)"
				}
				return v
			}
			t.Errorf("%s v%d: %s: embedded broker %s, Kafka 4.3 %s", s.name, s.req().GetVersion(), p, show(ev, eok), show(kv, kok))
		}
	}
	for j, a := range conformanceAllowed {
		if !seen[j] {
			t.Errorf("allowed difference %s %s (%s) was not seen: the broker answers as Kafka now, drop it from conformanceAllowed", a.step, a.path, a.reason)
		}
	}
	t.Logf("%d requests, %d fields the same on the embedded broker and Kafka 4.3", len(steps), compared)
}

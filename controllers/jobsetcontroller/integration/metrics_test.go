package integration

import (
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	jobset "github.com/fastjobset/jobset/api/jobset/v1alpha2"
	"github.com/fastjobset/jobset/controllers/internal/metrics"
	"github.com/fastjobset/jobset/tools/testing/wrappers"
)

var _ = Describe("Epoch gauges", func() {
	It("are reported by a controller that has not seen the epochs move, and deleted with the JobSet", func() {
		js := create(wrappers.MakeJobSet("trainer", ns).RestartStrategy(jobset.InPlaceRestart).
			ReplicatedJob(wrappers.MakeReplicatedJob("workers").Replicas(2).Pods(2).Obj()).Obj())
		Eventually(func() []string { return epochSeries(ns, js.Name) }).Should(ConsistOf("synced=0", "deprecated=0"))

		By("forgetting every series, as a newly elected controller process starts")
		metrics.SyncedEpoch.Reset()
		metrics.DeprecatedEpoch.Reset()

		By("reconciling the JobSet again without changing its status")
		Eventually(func() error {
			fresh := fetch(ctx, js)
			fresh.Labels = map[string]string{"poke": "1"}
			return k8sClient.Update(ctx, fresh)
		}).Should(Succeed())
		Eventually(func() []string { return epochSeries(ns, js.Name) }).Should(ConsistOf("synced=0", "deprecated=0"))

		By("deleting the JobSet")
		Expect(k8sClient.Delete(ctx, js)).To(Succeed())
		Eventually(func() []string { return epochSeries(ns, js.Name) }).Should(BeEmpty())
	})
})

// epochSeries lists the epoch gauges of one JobSet as "synced=N" and
// "deprecated=N".
func epochSeries(namespace, name string) []string {
	var series []string
	for prefix, gauge := range map[string]*prometheus.GaugeVec{"synced": metrics.SyncedEpoch, "deprecated": metrics.DeprecatedEpoch} {
		ch := make(chan prometheus.Metric, 64)
		go func() { gauge.Collect(ch); close(ch) }()
		for m := range ch {
			var out dto.Metric
			Expect(m.Write(&out)).To(Succeed())
			labels := map[string]string{}
			for _, l := range out.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == namespace && labels["jobset"] == name {
				series = append(series, prefix+"="+strconv.FormatFloat(out.GetGauge().GetValue(), 'f', -1, 64))
			}
		}
	}
	return series
}

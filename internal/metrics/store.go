/*
Copyright 2026 The tether authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// StoreObserver records the local file store's work in StoreWrite and
// StoreHandEdits. It is the file store's Options.Observer in `tether run`.
type StoreObserver struct{}

// Wrote records a write of verb that took d.
func (StoreObserver) Wrote(verb string, d time.Duration) {
	o, ok := storeWriteVerbs[verb]
	if !ok {
		o = StoreWrite.WithLabelValues(verb)
	}
	o.Observe(d.Seconds())
}

// storeWriteVerbs are the StoreWrite series of the store's verbs, looked
// up once rather than at every write.
var storeWriteVerbs = func() map[string]prometheus.Observer {
	m := map[string]prometheus.Observer{}
	for _, v := range []string{"create", "update", "patch", "delete"} {
		m[v] = StoreWrite.WithLabelValues(v)
	}
	return m
}()

// HandEdit records a hand edit adopted or, when adopted is false, refused.
func (StoreObserver) HandEdit(adopted bool) {
	result := HandEditRefused
	if adopted {
		result = HandEditAdopted
	}
	StoreHandEdits.WithLabelValues(result).Inc()
}

// journalDesc describes tether_store_journal_bytes.
var journalDesc = prometheus.NewDesc(Namespace+"_store_journal_bytes",
	"Size of the local file store's journal, read when scraped; it is compacted beyond its limit.", nil, nil)

// journalCollector reports the size its function returns at scrape time.
type journalCollector struct {
	size func() (int64, error)
}

func (c journalCollector) Describe(ch chan<- *prometheus.Desc) { ch <- journalDesc }

func (c journalCollector) Collect(ch chan<- prometheus.Metric) {
	n, err := c.size()
	if err != nil {
		// An invalid metric would fail the whole scrape.
		return
	}
	ch <- prometheus.MustNewConstMetric(journalDesc, prometheus.GaugeValue, float64(n))
}

// RegisterJournalSize reports size, the store journal's size, as
// tether_store_journal_bytes until the returned function is called. One
// store is reported at a time; a second registration fails.
func RegisterJournalSize(size func() (int64, error)) (unregister func(), err error) {
	c := journalCollector{size: size}
	if err := ctrlmetrics.Registry.Register(c); err != nil {
		return nil, err
	}
	return func() { ctrlmetrics.Registry.Unregister(c) }, nil
}

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

// Package metrics defines tether's Prometheus metrics and registers them on
// controller-runtime's metrics.Registry, which `tether run` serves beside
// controller-runtime's own. The reconcilers record what they do (measured
// at source); an observer counts what other processes did, as `tether run`
// sees it through its watches (observed); a collector computes the Hook
// gauge from the cache at scrape time. docs/metrics.md lists them all.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

// Namespace prefixes every tether metric name.
const Namespace = "tether"

// OtherLabel stands for a label value outside the known set, such as an
// event name in a hand-edited history, so that no input can grow a
// metric's series without bound.
const OtherLabel = "other"

// The metrics. Each is registered on controller-runtime's metrics.Registry
// when the package is loaded.
var (
	// HookTransitions counts Hook history entries as they appear, by event.
	HookTransitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "hook_transitions_total",
		Help: "Hook state-machine transitions seen in Hook histories since this process started watching, by event.",
	}, []string{"event"})

	// StaleDetections counts Hooks moved to recovering for a missed heartbeat.
	StaleDetections = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "stale_detections_total",
		Help: "Hooks the Hook reconciler moved to recovering because their heartbeat was overdue.",
	})

	// StaleDetectionDelay is the time from a heartbeat's due time to its detection.
	StaleDetectionDelay = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "stale_detection_delay_seconds",
		Help:    "Time from the moment a Hook's heartbeat fell due (lastHeartbeat + staleAfter) to the stored transition to recovering.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	})

	// WorkerCrashes counts Worker process deaths, by crash reason.
	WorkerCrashes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "worker_crashes_total",
		Help: "Worker processes that died unasked (a crash record was written), by reason.",
	}, []string{"reason"})

	// WorkerRestarts counts processes started again for an existing Worker.
	WorkerRestarts = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "worker_restarts_total",
		Help: "Worker processes started again after a crash or on `tether worker restart`.",
	})

	// WorkerRestartLatency is the time from a process's exit to its successor's launch.
	WorkerRestartLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "worker_restart_latency_seconds",
		Help:    "Time from the moment a Worker's process exit was seen to the launch of the new process.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
	})

	// AssigneeCleared counts Hooks freed because their Worker died.
	AssigneeCleared = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "assignee_cleared_total",
		Help: "Hooks whose spec.assignee the Hook reconciler cleared because the assigned Worker died, was lost or deleted.",
	})

	// ValidationDuration is the run time of validation commands, from their receipts.
	ValidationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "validation_duration_seconds",
		Help:    "Run time of step validation commands, from the receipts that appear in Hook statuses, by result (passed: exit code 0).",
		Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
	}, []string{"result"})

	// ReceiptsSigned counts signed receipts as they appear in Hook statuses.
	ReceiptsSigned = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "receipts_signed_total",
		Help: "Signed validation receipts that appeared in Hook statuses.",
	})

	// ReceiptVerificationFailures counts distinct receipts that failed verification.
	ReceiptVerificationFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "receipt_verification_failures_total",
		Help: "Distinct receipts whose signature or content failed verification when this process rendered a recovery file.",
	})

	// Checkpoints counts Checkpoint objects as they are created, by trigger.
	Checkpoints = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "checkpoints_total",
		Help: "Checkpoints created since this process started watching, by trigger.",
	}, []string{"trigger"})

	// CheckpointCapture is how long taking a checkpoint's snapshot took.
	CheckpointCapture = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "checkpoint_capture_seconds",
		Help:    "Time taken to capture a checkpoint (snapshot, ref and object), as recorded on each new Checkpoint, by trigger.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 11),
	}, []string{"trigger"})

	// StoreWrite is the latency of the local store's writes.
	StoreWrite = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "store_write_seconds",
		Help:    "Latency of this process's writes to the local file store (lock, validation, journal, fsync, rename), by verb.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 13),
	}, []string{"verb"})

	// StoreHandEdits counts hand edits of store files, adopted or refused.
	StoreHandEdits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "store_hand_edits_total",
		Help: "Hand edits of local store files this process adopted, or refused (invalid: the last valid version stays in effect).",
	}, []string{"result"})
)

// The values of StoreHandEdits' result label.
const (
	HandEditAdopted = "adopted"
	HandEditRefused = "refused"
)

// The values of ValidationDuration's result label.
const (
	ValidationPassed = "passed"
	ValidationFailed = "failed"
)

// checkpointTriggers are the triggers the Checkpoint schema allows.
var checkpointTriggers = []v1.CheckpointTrigger{
	v1.TriggerGitCommit, v1.TriggerGitPush, v1.TriggerPRCreated, v1.TriggerValidationPass,
	v1.TriggerStepComplete, v1.TriggerInterval, v1.TriggerManual, v1.TriggerPreCompact, v1.TriggerPreRestore,
}

// knownEvents are the history events hookfsm records.
var knownEvents = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range hookfsm.Events() {
		m[string(e)] = true
	}
	return m
}()

func init() {
	ctrlmetrics.Registry.MustRegister(
		HookTransitions, StaleDetections, StaleDetectionDelay,
		WorkerCrashes, WorkerRestarts, WorkerRestartLatency, AssigneeCleared,
		ValidationDuration, ReceiptsSigned, ReceiptVerificationFailures,
		Checkpoints, CheckpointCapture, StoreWrite, StoreHandEdits,
		hooksCollector,
	)
	// Series that start at zero, so that rate() and increase() see their
	// first event rather than a series appearing with it.
	for e := range knownEvents {
		HookTransitions.WithLabelValues(e)
	}
	for _, t := range checkpointTriggers {
		Checkpoints.WithLabelValues(string(t))
	}
	StoreHandEdits.WithLabelValues(HandEditAdopted)
	StoreHandEdits.WithLabelValues(HandEditRefused)
}

// eventLabel is the HookTransitions label of a history event.
func eventLabel(event string) string {
	if knownEvents[event] {
		return event
	}
	return OtherLabel
}

// triggerLabel is the Checkpoints label of a trigger.
func triggerLabel(t v1.CheckpointTrigger) string {
	for _, k := range checkpointTriggers {
		if t == k {
			return string(t)
		}
	}
	return OtherLabel
}

// StaleDetected records a stale detection stored at detected for a
// heartbeat that fell due at due.
func StaleDetected(due, detected time.Time) {
	StaleDetections.Inc()
	StaleDetectionDelay.Observe(max(0, detected.Sub(due).Seconds()))
}

// WorkerCrashed records a Worker process death for reason.
func WorkerCrashed(reason string) {
	WorkerCrashes.WithLabelValues(reason).Inc()
}

// WorkerRestarted records a process started again, exitSeen before launched.
func WorkerRestarted(exitSeen, launched time.Time) {
	WorkerRestarts.Inc()
	WorkerRestartLatency.Observe(max(0, launched.Sub(exitSeen).Seconds()))
}

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fractionAtOrBelow, histogram, histogramDelta, histogramQuantile, parseMetrics, sumOf } from './prometheus.ts';

const TEXT = `# HELP workqueue_queue_duration_seconds How long
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{le="0.1",name="microservice"} 50
workqueue_queue_duration_seconds_bucket{le="1",name="microservice"} 90
workqueue_queue_duration_seconds_bucket{le="10",name="microservice"} 100
workqueue_queue_duration_seconds_bucket{le="+Inf",name="microservice"} 100
workqueue_queue_duration_seconds_sum{name="microservice"} 42
workqueue_queue_duration_seconds_count{name="microservice"} 100
workqueue_queue_duration_seconds_bucket{le="0.1",name="other"} 7
workqueue_queue_duration_seconds_bucket{le="+Inf",name="other"} 7
rest_client_requests_total{code="200",method="GET"} 3
rest_client_requests_total{code="201",method="POST"} 2
odd_label{msg="a \\"quoted\\" value"} 1
`;

describe('prometheus text', () => {
  const samples = parseMetrics(TEXT);
  it('parses samples with labels and sums them', () => {
    assert.equal(sumOf(samples, 'rest_client_requests_total'), 5);
    assert.equal(sumOf(samples, 'rest_client_requests_total', { method: 'POST' }), 2);
    assert.equal(samples.find((s) => s.name === 'odd_label')?.labels.msg, 'a "quoted" value');
  });
  it('estimates quantiles like histogram_quantile', () => {
    const h = histogram(samples, 'workqueue_queue_duration_seconds', { name: 'microservice' });
    assert.equal(h.count, 100);
    assert.equal(histogramQuantile(h, 0.5), 0.1);
    assert.ok(Math.abs(histogramQuantile(h, 0.7) - 0.55) < 1e-9); // halfway through (0.1, 1]
    assert.ok(Math.abs(histogramQuantile(h, 0.99) - 9.1) < 1e-9);
    assert.equal(fractionAtOrBelow(h, 1), 0.9);
  });
  it('a quantile in the +Inf bucket is the highest finite bound; none without observations', () => {
    const h = { buckets: [{ le: 1, count: 1 }, { le: Infinity, count: 10 }], sum: 0, count: 10 };
    assert.equal(histogramQuantile(h, 0.99), 1);
    assert.ok(Number.isNaN(histogramQuantile({ buckets: [{ le: Infinity, count: 0 }], sum: 0, count: 0 }, 0.5)));
  });
  it('differences two scrapes', () => {
    const before = histogram(samples, 'workqueue_queue_duration_seconds', { name: 'microservice' });
    const later = parseMetrics(TEXT.replace('le="10",name="microservice"} 100', 'le="10",name="microservice"} 110').replace('le="+Inf",name="microservice"} 100', 'le="+Inf",name="microservice"} 110'));
    const d = histogramDelta(histogram(later, 'workqueue_queue_duration_seconds', { name: 'microservice' }), before);
    assert.deepEqual(d.buckets.map((b) => b.count), [0, 0, 10, 10]);
    assert.ok(histogramQuantile(d, 0.5) > 1);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fitStepModel, stepModelNote, stepPointsFromFigures } from './step-model.ts';
import type { StepPoint } from './step-model.ts';

describe('step model', () => {
  it('recovers the line runs lie on, and each contender sits on it', () => {
    const points: StepPoint[] = [10, 15, 20, 25, 30].flatMap((ms, i) => [
      { contender: 'converge', ipAddressCreateMs: ms, appliedSeconds: 4 + ms },
      { contender: 'minimal-client', ipAddressCreateMs: ms + 2 + i, appliedSeconds: 4 + ms + 2 + i },
    ]);
    const m = fitStepModel(points)!;
    assert.ok(Math.abs(m.interceptSeconds - 4) < 1e-9 && Math.abs(m.secondsPerMs - 1) < 1e-9 && Math.abs(m.r - 1) < 1e-9);
    assert.ok(Math.abs(m.byContender.converge!.medianResidualSeconds) < 1e-9);
    assert.equal(m.byContender['minimal-client']!.runs, 5);
  });

  it('a contender that spends time of its own off the step lies above the line by that time', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 5, max: 60, noNaN: true }), { minLength: 4, maxLength: 12 }), fc.double({ min: 0.5, max: 10, noNaN: true }), (steps, own) => {
        fc.pre(new Set(steps.map((s) => s.toFixed(3))).size >= 3);
        // Both contenders see the same steps; one adds `own` seconds to every run.
        const points = steps.flatMap((ms) => [
          { contender: 'plain', ipAddressCreateMs: ms, appliedSeconds: 3 + ms },
          { contender: 'slow', ipAddressCreateMs: ms, appliedSeconds: 3 + ms + own },
        ]);
        const m = fitStepModel(points)!;
        const gap = m.byContender.slow!.medianResidualSeconds - m.byContender.plain!.medianResidualSeconds;
        assert.ok(Math.abs(gap - own) < 1e-6, `gap ${gap} against ${own}`);
        assert.ok(m.byContender.slow!.medianResidualSeconds > 0 && m.byContender.plain!.medianResidualSeconds < 0);
      }),
    );
  });

  it('fits nothing from fewer than three runs or from runs with one step time', () => {
    assert.equal(fitStepModel([{ contender: 'a', ipAddressCreateMs: 1, appliedSeconds: 2 }, { contender: 'a', ipAddressCreateMs: 2, appliedSeconds: 3 }]), undefined);
    assert.equal(fitStepModel([1, 2, 3].map((s) => ({ contender: 'a', ipAddressCreateMs: 5, appliedSeconds: s }))), undefined);
  });

  it("reads a report's figures, skipping failed runs and contenders whose runs cannot be paired", () => {
    const figures = {
      microservices: 500,
      'unlimited.converge.appliedSecondsByRound': '24.89, failed, 27.76',
      'unlimited.converge.apiServerByRound': 'POST ipaddresses 21.2 ms ×500, POST services 153.4 ms ×500; watch events deployments 4000 | POST ipaddresses 23.6 ms ×500; watch events x 1',
      'unlimited.minimal-client.appliedSecondsByRound': '20.1, 21.5',
      'unlimited.minimal-client.apiServerByRound': 'POST ipaddresses 17 ms ×500',
      'defaults.converge.appliedSecondsByRound': '50',
      'defaults.converge.apiServerByRound': 'POST ipaddresses 30 ms ×500',
    };
    assert.deepEqual(stepPointsFromFigures(figures, 'unlimited'), [
      { contender: 'converge', appliedSeconds: 24.89, ipAddressCreateMs: 21.2 },
      { contender: 'converge', appliedSeconds: 27.76, ipAddressCreateMs: 23.6 },
    ]);
  });

  it('the note says the line, the time per Microservice and each distance', () => {
    const m = fitStepModel([10, 20, 30].map((ms) => ({ contender: 'converge', ipAddressCreateMs: ms, appliedSeconds: 4 + ms })))!;
    const note = stepModelNote(m, 500, (c) => c.toUpperCase());
    assert.match(note, /4 s \+ 1 s per ms .*r = 1\).*2 ms of the run per Microservice.*CONVERGE 0 s \(3 runs\)/);
  });
});

/**
 * Ages the way kubectl prints them (`45s`, `3m12s`, `25m`, `4h10m`, `3d`). Pure.
 * @module
 */

/** kubectl's `HumanDuration`, for a non-negative duration in milliseconds. */
export function humanDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 192) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (days < 730) return `${days}d`;
  const years = Math.floor(days / 365);
  return `${years}y${days % 365}d`;
}

/** Age of an RFC 3339 timestamp at `now`; `<unknown>` when absent or unparsable. */
export function formatAge(timestamp: string | null | undefined, now: Date): string {
  if (!timestamp) return '<unknown>';
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) return '<unknown>';
  return humanDuration(now.getTime() - at);
}

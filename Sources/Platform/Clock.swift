import Glibc

/// The monotonic clock (CLOCK_MONOTONIC), in nanoseconds. No allocation, no lock.
@inlinable
public func monotonicNanoseconds() -> UInt64 {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// `d` in whole nanoseconds; a negative duration counts as 0.
@inlinable
public func nanoseconds(_ d: Duration) -> UInt64 {
  let (s, atto) = d.components
  return UInt64(max(0, s)) * 1_000_000_000 + UInt64(max(0, atto) / 1_000_000_000)
}

/// `d` in seconds.
@inlinable
public func seconds(_ d: Duration) -> Double {
  Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

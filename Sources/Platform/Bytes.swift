import CHarkSys

/// Where `needle` first occurs in `haystack` (an offset into it), or nil; glibc's memmem(3).
/// An empty needle is found at 0.
public func firstOffset(of needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer)
  -> Int?
{
  guard needle.count > 0 else { return 0 }
  guard let base = haystack.baseAddress, haystack.count >= needle.count,
    let found = chs_memmem(base, haystack.count, needle.baseAddress, needle.count)
  else { return nil }
  return base.distance(to: found)
}

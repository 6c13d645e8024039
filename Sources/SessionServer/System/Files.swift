import FoundationEssentials
import Glibc
import Platform

/// A small file's bytes, or nil when it does not exist or cannot be read.
func readFile(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
  let fd = open(path, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { return nil }
  defer { close(fd) }
  var out: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 4096)
  while out.count < limit {
    let n = chunk.withUnsafeMutableBytes { raw in
      retryingEINTR { read(fd, raw.baseAddress, raw.count) }
    }
    if n <= 0 { break }
    out.append(contentsOf: chunk[0..<n])
  }
  return out
}

/// Writes a file so that a reader sees the old or the new content, never a torn one.
func writeFileAtomically(_ path: String, _ bytes: [UInt8]) throws(SystemError) {
  let temporary = path + ".tmp.\(getpid())"
  let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
  guard fd >= 0 else { throw .last("creating '\(temporary)'") }
  var done = 0
  while done < bytes.count {
    let n = bytes[done...].withUnsafeBytes { raw in
      retryingEINTR { write(fd, raw.baseAddress, raw.count) }
    }
    if n <= 0 {
      let e = SystemError.last("writing '\(temporary)'")
      close(fd)
      unlink(temporary)
      throw e
    }
    done += n
  }
  fsync(fd)
  close(fd)
  guard rename(temporary, path) == 0 else {
    let e = SystemError.last("replacing '\(path)'")
    unlink(temporary)
    throw e
  }
}

func encodeJSON(_ value: some Encodable) throws -> [UInt8] {
  [UInt8](try JSONEncoder().encode(value))
}

func decodeJSON<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
  try JSONDecoder().decode(type, from: Data(bytes))
}

import FoundationEssentials
import Glibc
import Platform

/// A small file's bytes, or nil when it does not exist or cannot be read.
func readFile(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
  guard case .bytes(let bytes) = readWholeFile(path, limit: limit) else { return nil }
  return bytes
}

func encodeJSON(_ value: some Encodable) throws -> [UInt8] {
  [UInt8](try JSONEncoder().encode(value))
}

func decodeJSON<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
  try JSONDecoder().decode(type, from: Data(bytes))
}

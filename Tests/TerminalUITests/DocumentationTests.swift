import Glibc
import Testing

@testable import TerminalUI

/// man/hark.1's KEYS section names every action and its default keys, so that rebinding can
/// be done from the man page alone.
@Suite(.timeLimit(.minutes(2))) struct DocumentationTests {
  private func manPage() -> String? {
    var root = "\(#filePath)"
    for _ in 0..<3 { root = String(root[..<(root.lastIndex(of: "/") ?? root.startIndex)]) }
    guard let f = fopen(root + "/man/hark.1", "r") else { return nil }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var c = fgetc(f)
    while c != EOF {
      bytes.append(UInt8(c))
      c = fgetc(f)
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  @Test func theManPageListsEveryActionWithItsDefaultKeys() throws {
    let page = try #require(manPage())
    let start = try #require(page.firstRange(of: "\n.SH KEYS\n"))
    let end = try #require(page[start.upperBound...].firstRange(of: "\n.SH "))
    // The section with troff's escapes undone: "\-" is "-", "\\" is "\".
    let keys = page[start.upperBound..<end.lowerBound]
      .replacingOccurrences("\\-", "-").replacingOccurrences("\\\\", "\\")
    let entries = keys.components("\n.TP\n").dropFirst()
    for action in UIAction.allCases {
      let entry = entries.first { $0.contains("\n.I \(action.rawValue)\n") }
      #expect(entry != nil, "man/hark.1 KEYS has no entry for '\(action.rawValue)'")
      for key in action.defaultKeys {
        #expect(
          entry?.hasPrefix(".B \"\(key)\"") == true || entry?.contains("\"\(key)\"") == true,
          "man/hark.1 KEYS does not give '\(key)' for '\(action.rawValue)'")
      }
    }
  }
}

extension StringProtocol {
  fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
    var out = ""
    var rest = Substring(self)
    while let r = rest.firstRange(of: target) {
      out += rest[..<r.lowerBound] + replacement
      rest = rest[r.upperBound...]
    }
    return out + rest
  }

  fileprivate func components(_ separator: String) -> [Substring] {
    var out: [Substring] = []
    var rest = Substring(self)
    while let r = rest.firstRange(of: separator) {
      out.append(rest[..<r.lowerBound])
      rest = rest[r.upperBound...]
    }
    return out + [rest]
  }
}

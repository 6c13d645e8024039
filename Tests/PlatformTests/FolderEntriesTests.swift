import Glibc
import Platform
import Testing

@Suite struct FolderEntriesTests {
  /// Every name but . and .., hidden ones too, a name that is not UTF-8 as its bytes.
  @Test func everyNameButTheDotsAsItsBytes() throws {
    let folder = Scratch.folder()
    let latin1 = FileName.string(Array("caf".utf8) + [0xE9])
    for name in ["a.flac", ".hidden", latin1] {
      try replaceFile(folder + "/" + name, with: [UInt8]())
    }
    mkdir(folder + "/sub", 0o700)
    #expect(Set(try #require(folderEntries(folder))) == [".hidden", "a.flac", latin1, "sub"])
    #expect(folderEntries(folder + "/sub") == [])
    #expect(folderEntries(folder + "/missing") == nil)
  }
}

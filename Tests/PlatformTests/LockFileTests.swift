import Glibc
import Platform
import Testing

@Suite struct LockFileTests {
  @Test func aLockTakenIsHeldRefusedToAnotherAndFreeOnceClosed() throws {
    let path = Scratch.folder() + "/server.lock"
    #expect(!lockIsHeld(path), "no file: no holder")
    let fd = try takeLock(path)
    #expect(Scratch.contents(path) == "\(getpid())\n")
    #expect(Scratch.mode(path) == 0o600)
    #expect(lockIsHeld(path))
    #expect(throws: LockRefusal.held(by: getpid())) { try takeLock(path) }
    close(fd)
    #expect(!lockIsHeld(path))
    let again = try takeLock(path)
    #expect(lockIsHeld(path))
    close(again)
  }

  @Test func aLockInAFolderThatIsNotThereIsAnError() {
    #expect(throws: LockRefusal.self) { try takeLock("/nonexistent/folder/x.lock") }
  }
}

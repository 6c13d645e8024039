import Glibc
import Testing

@testable import ALSAOutput

/// The inotify watch that notices cards coming and going, on a directory of the test's own
/// standing in for /dev/snd.
@Suite(.timeLimit(.minutes(2))) struct CardNodesTests {
  /// The changes that arrive within `timeout` (inotify delivers at once; the wait is slack).
  func changes(_ nodes: CardNodes, count: Int, timeout: Duration = .seconds(2)) async
    -> [CardNodes.Change]
  {
    var seen: [CardNodes.Change] = []
    let deadline = ContinuousClock.now + timeout
    while seen.count < count && ContinuousClock.now < deadline {
      seen += nodes.readChanges()
      if seen.count < count { try? await Task.sleep(for: .milliseconds(10)) }
    }
    return seen
  }

  @Test func controlNodesAppearingAndVanishingAreNoticed() async throws {
    let root = makeTemporaryDirectory("hark-cardnodes")
    defer { removeDirectory(root) }
    let snd = root + "/snd"
    mkdir(snd, 0o755)
    let nodes = try #require(CardNodes(directory: snd))
    writeFile(snd + "/controlC3", "")
    // writeFile creates a temporary and renames it over: a node moved in counts as created.
    #expect(await changes(nodes, count: 1) == [.created(card: 3)])
    chmod(snd + "/controlC3", 0o600)
    #expect(await changes(nodes, count: 1) == [.permissionsChanged(card: 3)])
    writeFile(snd + "/pcmC3D0p", "")
    unlink(snd + "/controlC3")
    #expect(await changes(nodes, count: 1) == [.vanished(card: 3)])
  }

  @Test func theDirectoryItselfMayAppearLater() async throws {
    let root = makeTemporaryDirectory("hark-cardnodes")
    defer { removeDirectory(root) }
    let snd = root + "/snd"
    let nodes = try #require(CardNodes(directory: snd))
    mkdir(snd, 0o755)
    #expect(await changes(nodes, count: 1) == [.directoryAppeared])
    writeFile(snd + "/controlC0", "")
    #expect(await changes(nodes, count: 1) == [.created(card: 0)])
    rmdir(snd + "/controlC0")
    unlink(snd + "/controlC0")
    #expect(await changes(nodes, count: 1) == [.vanished(card: 0)])
    rmdir(snd)
    _ = await changes(nodes, count: 1, timeout: .milliseconds(100))
    mkdir(snd, 0o755)
    #expect(await changes(nodes, count: 1) == [.directoryAppeared])
  }
}

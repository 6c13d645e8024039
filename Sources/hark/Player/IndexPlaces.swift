import Glibc
import LibraryIndex
import PlayerCore
import PlayerEngine

/// The player's kept places and speeds, in the library index
/// (`$XDG_CACHE_HOME/hark/library.sqlite3`, tables `places` and `speeds`). SQLite is loaded and the index opened on first use: only when a long
/// recording plays. Used on the player's place keeper thread only (`PlaceStore`), one call at
/// a time; each place is on disk when `keep` returns (`Library.syncEachWrite`).
final class IndexPlaces: PlaceStore, @unchecked Sendable {
  private let path: String?
  private var library: Library?
  /// The last failure said in hark's log, so that a broken index is said once, not each time.
  private var lastProblem: String?

  init(path: String? = Library.defaultPath()) { self.path = path }

  func place(of file: String) -> ListeningPlace? {
    guard let library = open() else { return nil }
    do {
      guard let kept = try library.place(of: file) else { return nil }
      return kept.position.map { .at($0) } ?? .finished
    } catch {
      failed("cannot read where '\(file)' was left", error)
      return nil
    }
  }

  func rate(ofFolder folder: String) -> Double? {
    guard let library = open() else { return nil }
    do {
      return try library.speed(ofFolder: folder)
    } catch {
      failed("cannot read the speed of '\(folder)'", error)
      return nil
    }
  }

  func keepRate(_ rate: Double, ofFolder folder: String) {
    guard let library = open() else { return }
    do {
      try library.keepSpeed(rate, ofFolder: folder, time: Self.now())
    } catch {
      failed("cannot keep the speed of '\(folder)'", error)
    }
  }

  private static func now() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
  }

  func keep(_ place: ListeningPlace, of file: String, duration: Double?) {
    guard let library = open() else { return }
    let position: Double? =
      switch place {
      case .at(let s): s
      case .finished: nil
      }
    do {
      try library.keepPlace(
        of: file, at: position, duration: duration, time: Self.now())
    } catch {
      failed("cannot keep where '\(file)' was left", error)
    }
  }

  /// The index, opened (and made to sync each write) on first use; nil when it cannot be.
  private func open() -> Library? {
    if let library { return library }
    guard let path else { return nil }
    do {
      // Not checked page by page (0.1 s at 50,000 tracks): the scan does that, and sets a
      // damaged index aside (copying its places).
      let opened = try Library(path: path, checked: false)
      try opened.syncEachWrite()
      library = opened
      return opened
    } catch {
      failed("cannot open the library index '\(path)' to keep places", error)
      return nil
    }
  }

  private func failed(_ what: String, _ error: SQLiteError) {
    // Opened afresh at the next call: the scan may have replaced a damaged index.
    library = nil
    let line = "\(what): \(error)"
    if line != lastProblem { HarkLog.write(line) }
    lastProblem = line
  }
}

import Glibc
import Platform
import Synchronization

/// The write end of the wake pipe, for signal handlers (which can capture nothing).
private let signalWakeFD = Atomic<Int32>(-1)

/// Signals the interface handles on its thread: each writes its number into the wake pipe.
enum InterfaceSignals {
  /// Quit (INT, TERM, HUP), suspend (TSTP), continue (CONT), resize (WINCH).
  static let handled: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT, SIGWINCH]
  /// Signals of a crash: the terminal is given back before the process dies.
  static let fatal: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]
  /// The byte in the wake pipe that means "look at the mailbox"; signals write their number
  /// (< 65).
  static let mail: UInt8 = 255

  /// What each crash signal did before, written before the handlers go in and only read by
  /// them (a lock would not be async-signal-safe).
  private final class Previous: @unchecked Sendable {
    let actions = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    let saved = UnsafeMutablePointer<Bool>.allocate(capacity: 65)
    init() { saved.initialize(repeating: false, count: 65) }
  }
  private static let previousFatal = Previous()

  /// Routes `handled` signals to `pipe` (one byte each, the signal's number). Installed before curses starts, so curses keeps its
  /// hands off them (it installs its own only where the default is in place).
  static func install(_ pipe: WakePipe) {
    signalWakeFD.store(pipe.writeFD, ordering: .releasing)
    for s in handled { route(s) }
  }

  /// Routes one signal to the pipe again (after `setDefault`).
  static func route(_ signal: Int32) {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { signo in
      let saved = errno
      var b = UInt8(truncatingIfNeeded: signo)
      _ = write(signalWakeFD.load(ordering: .acquiring), &b, 1)
      errno = saved
    }
    sigemptyset(&action.sa_mask)
    // Other threads' reads and writes go on; the UI thread's poll returns EINTR regardless.
    action.sa_flags = SA_RESTART
    sigaction(signal, &action, nil)
  }

  static func setDefault(_ signal: Int32) {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = SIG_DFL
    sigemptyset(&action.sa_mask)
    sigaction(signal, &action, nil)
  }

  /// Back to the defaults, after the terminal was given back; SIGHUP ignored: a closing terminal
  /// sends it more than once (the kernel, then the shell to its jobs), and once the first has
  /// ended the interface, the rest must not end the process before its owner has left the player
  /// playing or told it to stop.
  static func uninstall() {
    for s in handled where s != SIGHUP { setDefault(s) }
    signal(SIGHUP, SIG_IGN)
    signalWakeFD.store(-1, ordering: .releasing)
  }

  /// On a crash signal: give the terminal back, then let what was there before (the default,
  /// or Swift's backtracer) handle the signal as it would have.
  static func installCrashHandlers() {
    for s in fatal {
      var action = sigaction()
      action.__sigaction_handler.sa_handler = { signo in
        EmergencyRestore.shared.restore()
        // Put back the previous disposition; returning re-runs the faulting instruction (or
        // abort(3) raises again), and that disposition handles it.
        let table = InterfaceSignals.previousFatal
        if signo > 0 && signo < 65 && table.saved[Int(signo)] {
          sigaction(signo, table.actions + Int(signo), nil)
        } else {
          InterfaceSignals.setDefault(signo)
        }
        if signo == SIGABRT || signo == SIGTRAP || signo == SIGFPE { raise(signo) }
      }
      sigemptyset(&action.sa_mask)
      action.sa_flags = Int32(bitPattern: UInt32(SA_RESETHAND))
      sigaction(s, nil, previousFatal.actions + Int(s))
      previousFatal.saved[Int(s)] = true
      sigaction(s, &action, nil)
    }
  }
}

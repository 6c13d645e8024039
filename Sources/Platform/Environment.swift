import Glibc

/// The environment variable `name`, or nil when it is not set.
public func environment(_ name: String) -> String? {
  guard let value = getenv(name) else { return nil }
  return String(cString: value)
}

/// The XDG base directories of the user (XDG Base Directory Specification): the variable when
/// it holds an absolute path (the specification says to ignore a relative one), else the
/// default under `$HOME`; nil when neither is there.
public enum XDGDirectory: Sendable, CaseIterable {
  /// `$XDG_CONFIG_HOME`, else `~/.config`: settings the user writes.
  case config
  /// `$XDG_STATE_HOME`, else `~/.local/state`: what should outlive a restart (logs, a queue).
  case state
  /// `$XDG_CACHE_HOME`, else `~/.cache`: what can be made again.
  case cache
  /// `$XDG_DATA_HOME`, else `~/.local/share`: what the user keeps (playlists).
  case data

  /// The variable that names the directory.
  public var variable: String {
    switch self {
    case .config: "XDG_CONFIG_HOME"
    case .state: "XDG_STATE_HOME"
    case .cache: "XDG_CACHE_HOME"
    case .data: "XDG_DATA_HOME"
    }
  }

  /// Where it is under `$HOME` when the variable does not say.
  public var defaultUnderHome: String {
    switch self {
    case .config: "/.config"
    case .state: "/.local/state"
    case .cache: "/.cache"
    case .data: "/.local/share"
    }
  }

  /// The directory (not created); nil without the variable and without a `$HOME`.
  public var path: String? { path(in: environment) }

  /// The directory as the environment `lookup` says (tests pass their own, rather than change
  /// the process's, which every test running beside them reads).
  public func path(in lookup: (String) -> String?) -> String? {
    if let given = lookup(variable), given.hasPrefix("/") { return given }
    guard let home = lookup("HOME"), !home.isEmpty else { return nil }
    return home + defaultUnderHome
  }
}

import AudioCore
import CFFmpeg
import Glibc

/// Why the helper stops: what kind of trouble it is (for the player to decide on), plain words
/// for the user, and FFmpeg's own text for bug reports.
struct Failure: Error {
  var kind: DecodeError.Kind
  var reason: String
  var detail: String?

  init(_ kind: DecodeError.Kind, reason: String, detail: String? = nil) {
    self.kind = kind
    self.reason = reason
    self.detail = detail
  }

  /// `reason`, with the text of FFmpeg's error `code` as the detail. `logged`: for the call
  /// begun with `forgetLoggedError`, whose EIO its log may explain (see `errorText`).
  init(_ kind: DecodeError.Kind, reason: String, code: Int32, logged: Bool = false) {
    self.init(kind, reason: reason, detail: errorText(code, orLogged: logged))
  }
}

/// FFmpeg's words for an AVERROR code (av_strerror). With `orLogged`, for EIO, what its network
/// layer answers for much it cannot name ("Input/output error" for an unknown host), the last
/// error it logged on this thread since `forgetLoggedError` says which, when there is one
/// ("Failed to resolve hostname radio.exmple: Name or service not known"). Only where asked:
/// an error logged earlier (a damaged frame) would explain nothing about a later one.
func errorText(_ code: Int32, orLogged: Bool = false) -> String {
  if orLogged, code == cff_error_io() {
    var logged = String(cString: cff_last_logged_error())
    while logged.last?.isWhitespace == true { logged.removeLast() }
    if !logged.isEmpty { return logged }
  }
  var buffer = [CChar](repeating: 0, count: 128)
  return buffer.withUnsafeMutableBufferPointer {
    String(cString: cff_error_text(code, $0.baseAddress, $0.count))
  }
}

/// Starts a call whose failure `errorText` may explain from the log.
func forgetLoggedError() { cff_forget_logged_error() }

/// Quiet unless HARK_FFMPEG_LOG asks: FFmpeg's log goes to stderr, where the parent reads only
/// the last line.
func configureLog() {
  cff_keep_logged_errors()
  let asked = getenv("HARK_FFMPEG_LOG").map { String(cString: $0) } ?? ""
  switch asked {
  case "": av_log_set_level(AV_LOG_QUIET)
  case "warning": av_log_set_level(AV_LOG_WARNING)
  case "info": av_log_set_level(AV_LOG_INFO)
  case "debug": av_log_set_level(AV_LOG_DEBUG)
  default: av_log_set_level(AV_LOG_ERROR)
  }
}

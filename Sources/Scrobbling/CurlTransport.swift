import CCurl
import Glibc

/// Requests through libcurl (loaded when the first is sent): TLS, proxies as the environment
/// says (http_proxy, https_proxy, no_proxy), redirects not followed. Each request its own
/// handle, on the calling thread.
public struct CurlTransport: Transport {
  /// Seconds to connect at most.
  public var connectTimeout = 10.0

  public init() {}

  public func send(_ request: HTTPRequest, timeout: Double) -> HTTPOutcome {
    var response = ccurl_response()
    defer { ccurl_free(&response) }
    let headers = request.headers.map { strdup($0) }
    defer { for h in headers { free(h) } }
    let pointers = headers.map { UnsafePointer<CChar>($0) }
    let rc = pointers.withUnsafeBufferPointer { list in
      request.body.withUnsafeBufferPointer { body in
        body.withMemoryRebound(to: CChar.self) { chars in
          ccurl_request(
            request.method, request.url, list.baseAddress, Int32(list.count), chars.baseAddress,
            chars.count, Int(max(1, timeout.rounded(.up))),
            Int(max(1, connectTimeout.rounded(.up))), &response)
        }
      }
    }
    guard rc == 0 else {
      let why = withUnsafeBytes(of: response.error) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      return .failed(why.isEmpty ? "no answer" : why)
    }
    let body =
      response.body.map {
        Array(UnsafeRawBufferPointer(start: $0, count: response.body_length))
      } ?? []
    return .response(
      status: response.status, body: body,
      retryAfter: response.retry_after >= 0 ? response.retry_after : nil)
  }
}

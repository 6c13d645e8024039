// jack-probe: starts a JackWatcher and prints what it reports, one line each, until its
// standard input closes. The extra control devices come from the arguments and from
// HARK_JACK_CONTROLS.
//
//   outputs: Headphones (HDA Intel PCH) | HDMI/DisplayPort 3 (HDA Intel PCH)
//   plugged headphones: Headphones (HDA Intel PCH)
//   unplugged headphones: Headphones (HDA Intel PCH)
//   problem: cannot watch the jacks of 'fakejack': ...
import ALSAOutput
import Glibc
import JackRoutes

/// Writes a line straight to descriptor 1: unbuffered, so the test sees it at once.
func say(_ line: String) {
  var text = line + "\n"
  text.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

let controls = Array(CommandLine.arguments.dropFirst()) + JackWatcher.extraControlsFromEnvironment()
let watcher = JackWatcher(extraControls: controls)
say("outputs: " + watcher.outputs.map(\.name).joined(separator: " | "))

let printer = Task.detached {
  for await event in watcher.events {
    switch event {
    case .plugged(let route): say("plugged \(route.kind.rawValue): \(route.name)")
    case .unplugged(let route): say("unplugged \(route.kind.rawValue): \(route.name)")
    case .problem(let text): say("problem: \(text)")
    }
  }
}

// The parent ends the probe by closing our standard input (or by dying, which does the same).
var byte: UInt8 = 0
while true {
  let n = read(0, &byte, 1)
  if n > 0 || (n < 0 && errno == EINTR) { continue }
  break
}
watcher.close()
await printer.value
say("closed")

/*
 hark-ffmpeg --serve: a server of decoding processes, so that a track costs neither an exec nor
 a fork.

 Starting hark-ffmpeg loads FFmpeg and the 135 libraries Debian's build of it links (codecs,
 TLS, fonts): about 30 ms, 20 of them CPU, paid again for every track and every seek. A fork
 of a process that has them loaded still costs 5 to 7 ms of CPU (its 600 mappings copied, a
 thousand pages faulted in again, all of it torn down at exit). So the server keeps workers:
 forked from it, each runs a request exactly as `hark-ffmpeg ARGUMENTS…` would, on the
 descriptors the request brings, and then waits for the next one. A crash or a hang on a
 hostile file ends only the worker that met it (the next request gets a new one).

 stdin is a SOCK_SEQPACKET Unix socket to the player. A request is one message: its arguments,
 each ended by a NUL byte, with descriptors attached (SCM_RIGHTS), in this order:

   status     a pipe's write end: the request's wait status (4 bytes, as waitpid gives it:
              its exit status, or the signal that ended its worker) is written there when it
              is done, and the pipe closed
   stdin      its lifeline (see --lifeline): closed by the player, it ends the worker
   stdout     its frames; closed (back to /dev/null) when they are all written
   stderr     its line; closed likewise
   [fd 3]     optional: a stream's events

 The answer is one message of 4 bytes: the pid of the worker doing it, or minus an error number
 (a request that is not one, fork failing, new workers that will not take it). A worker
 acknowledges each request as it reads it, so that one killed while idle is not taken for one
 that crashed on the file. A worker's status comes before it takes another request, and the player signals it only while its request's status has not come (HelperProcess).

 Workers are this process's children, not the player's: it reaps them. It keeps two idle at
 most. It exits when the player closes its end, killing and reaping its workers first (the
 player waits for it as it exits, HelperServer, so that their CPU time counts in the player's,
 as a spawned helper's does), or when nothing has been asked for 30 s (FFmpeg's memory goes
 back to the system; the player starts a new server when it next needs one).

 The server has one thread, so that fork copies a process with nothing half done in it.
*/
import CFFmpeg
import CHarkSys
import Glibc
import Platform

/// A worker process and the server's end of its socket.
private struct Worker {
  var pid: pid_t
  var channel: Int32
  /// The status pipe of the request it is doing; -1 while idle.
  var status: Int32 = -1

  var isIdle: Bool { status < 0 }
}

/// How long the server waits with no request under way before it exits, in milliseconds.
private let idleLimit: Int32 = 30_000
/// Idle workers kept beyond this many are let go.
private let mostIdle = 2

/// Serves requests on stdin until the player closes it, or nothing has been asked for
/// `idleLimit`; never returns.
func serve() -> Never {
  // A status pipe whose reader has gone (the player dropped that decoder) must fail the write,
  // not end the server.
  signal(SIGPIPE, SIG_IGN)
  warmUp()
  var workers: [Worker] = []
  let message = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
  while true {
    var polled = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
    polled += workers.map { pollfd(fd: $0.channel, events: Int16(POLLIN), revents: 0) }
    let busy = workers.contains { !$0.isIdle }
    let ready = poll(&polled, nfds_t(polled.count), busy ? -1 : idleLimit)
    if ready < 0 {
      if errno == EINTR { continue }
      end(workers)
    }
    if ready == 0 { end(workers) }
    // What the workers said: a request done, or their end.
    var gone: [Int] = []
    for (i, fd) in polled.dropFirst().enumerated() where fd.revents != 0 {
      if !hearFrom(&workers[i]) { gone.append(i) }
    }
    for i in gone.reversed() { workers.remove(at: i) }
    // Idle ones beyond what the next requests will want.
    while workers.filter(\.isIdle).count > mostIdle, let i = workers.firstIndex(where: \.isIdle) {
      reap(workers.remove(at: i), reporting: false)  // its socket closed: it exits
    }
    guard polled[0].revents != 0 else { continue }

    var fds = [Int32](repeating: -1, count: Int(CHS_MOST_DESCRIPTORS))
    var fdCount: Int32 = 0
    let got = chs_receive_with_descriptors(0, message.baseAddress, message.count, &fds, &fdCount)
    if got == 0 { end(workers) }  // The player has gone, or is going.
    if got < 0 {
      if errno == EMSGSIZE {
        answer(-EMSGSIZE)
        continue
      }
      end(workers)
    }
    let given = Array(fds.prefix(Int(fdCount)))
    let bytes = UnsafeRawBufferPointer(rebasing: message[..<got])
    guard given.count == 4 || given.count == 5, bytes.last == 0 else {
      for fd in given { close(fd) }
      answer(-EINVAL)
      continue
    }
    answer(hand(bytes, Array(given.dropFirst()), status: given[0], to: &workers))
  }
}

/// Gives the request to an idle worker, or a new one; the worker's pid, or minus an error
/// number. The request's descriptors are closed here either way (the status pipe kept, in the
/// worker's entry, when it was given).
private func hand(
  _ request: UnsafeRawBufferPointer, _ descriptors: [Int32], status: Int32,
  to workers: inout [Worker]
) -> Int32 {
  defer { for fd in descriptors { close(fd) } }
  // Idle workers are few (at most `mostIdle`); a new one that will not take a request twice
  // (it cannot start FFmpeg, say) will not a third time: the player hears why, not a hang.
  var newOnesLost = 0
  while true {
    let i: Int
    let isNew: Bool
    if let idle = workers.firstIndex(where: \.isIdle) {
      i = idle
      isNew = false
    } else {
      guard newOnesLost < 2 else {
        close(status)
        return -ECHILD
      }
      guard let new = startWorker() else {
        let code = errno
        close(status)
        return -code
      }
      workers.append(new)
      i = workers.count - 1
      isNew = true
    }
    let sent = chs_send_with_descriptors(
      workers[i].channel, request.baseAddress, request.count, descriptors,
      Int32(descriptors.count))
    if sent == request.count && tookIt(workers[i]) {
      workers[i].status = status
      return workers[i].pid
    }
    // It has just ended (killed while idle), or is stuck: the next one, or a new one.
    if isNew { newOnesLost += 1 }
    _ = kill(workers[i].pid, SIGKILL)
    reap(workers.remove(at: i), reporting: false)
  }
}

/// A worker says it has a request (-1) as soon as it reads it: one that was ending when it was
/// sent (killed while idle) never does, and the request goes to another rather than its end
/// being taken for the request's.
private let received: Int32 = -1

/// Whether `worker` said it has the request just sent, within a second.
private func tookIt(_ worker: Worker) -> Bool {
  var ready = pollfd(fd: worker.channel, events: Int16(POLLIN), revents: 0)
  var polled: Int32
  repeat { polled = poll(&ready, 1, 1_000) } while polled < 0 && errno == EINTR
  guard polled > 0 else { return false }
  var word: Int32 = 0
  var got: Int
  repeat { got = recv(worker.channel, &word, 4, 0) } while got < 0 && errno == EINTR
  return got == 4 && word == received
}

/// Reads what a worker said: its request's status (passed on to the player's pipe), or its end
/// (its process reaped, its request's status the way it ended). Whether it is still there.
private func hearFrom(_ worker: inout Worker) -> Bool {
  var status: Int32 = 0
  var got: Int
  repeat { got = recv(worker.channel, &status, 4, 0) } while got < 0 && errno == EINTR
  guard got == 4 else {
    reap(worker, reporting: true)
    return false
  }
  if worker.status >= 0 {
    _ = write(worker.status, &status, 4)
    close(worker.status)
    worker.status = -1
  }
  return true
}

/// Reaps a worker that has ended (or is ending: its socket closed); with `reporting`, writes
/// how it ended to its request's status pipe.
private func reap(_ worker: Worker, reporting: Bool) {
  close(worker.channel)
  var status: Int32 = 0
  var rc: pid_t
  repeat { rc = waitpid(worker.pid, &status, 0) } while rc < 0 && errno == EINTR
  if worker.status >= 0 {
    if reporting && rc == worker.pid { _ = write(worker.status, &status, 4) }
    close(worker.status)
  }
}

/// Kills and reaps every worker, then exits.
private func end(_ workers: [Worker]) -> Never {
  for worker in workers where !worker.isIdle { _ = kill(worker.pid, SIGKILL) }
  for worker in workers { reap(worker, reporting: true) }
  exit(0)
}

/// Sends the answer to a request: a pid, or minus an error number.
private func answer(_ value: Int32) {
  var value = value
  _ = send(0, &value, MemoryLayout<Int32>.size, Int32(MSG_NOSIGNAL))
}

/// Forks a worker; the server's entry for it, or nil (errno set) when fork or socketpair fail.
private func startWorker() -> Worker? {
  var pair: [Int32] = [-1, -1]
  guard chs_socketpair_seqpacket(&pair) == 0 else { return nil }
  let pid = fork()
  if pid == 0 {
    // Nothing of the server's but its socket: not the other workers' sockets, nor a request's
    // pipes (a copy of its stdout held here would keep the player from seeing its end). The
    // socket moved well above 3, where a request's descriptors go.
    let channel = fcntl(pair[1], F_DUPFD_CLOEXEC, Int32(64))
    guard channel >= 0 else { _exit(1) }
    chs_close_all_but(channel)
    work(on: channel)
  }
  close(pair[1])
  guard pid > 0 else {
    close(pair[0])
    return nil
  }
  return Worker(pid: pid, channel: pair[0])
}

/// A worker's life: requests from `channel`, one at a time, each run as `hark-ffmpeg
/// ARGUMENTS…` would run it on the descriptors it brings, its status sent back when done.
/// Exits when the server closes its end; never returns.
private func work(on channel: Int32) -> Never {
  // The request's process, as a spawn would have made it: a process group of its own (the
  // terminal's ^C and ^Z are the player's to handle), SIGPIPE as it comes (a player that
  // stopped reading ends it), stdio on /dev/null between requests (not the server's socket).
  _ = setpgid(0, 0)
  signal(SIGPIPE, SIG_DFL)
  let null = open("/dev/null", O_RDWR)
  for target: Int32 in 0...2 { _ = dup2(null, target) }
  if null > 2 { close(null) }
  let message = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
  while true {
    var fds = [Int32](repeating: -1, count: Int(CHS_MOST_DESCRIPTORS))
    var fdCount: Int32 = 0
    let got = chs_receive_with_descriptors(
      channel, message.baseAddress, message.count, &fds, &fdCount)
    guard got > 0 else { exit(0) }
    var took = received
    guard send(channel, &took, 4, Int32(MSG_NOSIGNAL)) == 4 else { exit(1) }
    let given = Array(fds.prefix(Int(fdCount)))
    let words = UnsafeRawBufferPointer(rebasing: message[..<got]).dropLast()
      .split(separator: 0, omittingEmptySubsequences: false)
    let arguments = words.map { FileName.string(Array($0)) }
    place(given)
    var status: Int32
    if let request = Request(arguments) {
      let watch = request.lifeline ? LifelineWatch() : nil
      status = perform(request)
      // Past here the player may drop the run (its lifeline closes): no longer ours to die of.
      watch?.stop()
    } else {
      say(usage)
      status = 2
    }
    // Its stdout and stderr closed (the player reads their end), stdin and descriptor 3 let
    // go; then the status, in waitpid's form for an exit.
    let null = open("/dev/null", O_RDWR)
    for target: Int32 in 0...2 { _ = dup2(null, target) }
    if null > 2 { close(null) }
    close(3)
    var word = status << 8
    guard send(channel, &word, 4, Int32(MSG_NOSIGNAL)) == 4 else { exit(1) }
  }
}

/// Puts a request's descriptors on 0, 1, 2 (and 3).
private func place(_ given: [Int32]) {
  // Moved above the targets first, so that no dup2 overwrites a descriptor still to be moved.
  let sources = given.map { fd in
    let moved = fcntl(fd, F_DUPFD, Int32(16))
    close(fd)
    return moved
  }
  for (target, fd) in sources.enumerated() where fd >= 0 {
    _ = dup2(fd, Int32(target))
    close(fd)
  }
}

/// Opens and closes a decoder of each codec the player meets most (AAC, ALAC), so that the
/// tables they compute once per process (AAC's windows and code books: sines, memsets) are
/// made here, once, and every forked child finds them made.
private func warmUp() {
  for id in [AV_CODEC_ID_AAC, AV_CODEC_ID_ALAC] {
    guard let decoder = avcodec_find_decoder(id) else { continue }
    var context = avcodec_alloc_context3(decoder)
    guard let codec = context else { continue }
    codec.pointee.sample_rate = 44_100
    av_channel_layout_default(&codec.pointee.ch_layout, 2)
    _ = avcodec_open2(codec, decoder, nil)
    avcodec_free_context(&context)
  }
}

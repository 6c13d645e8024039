import CPulse
import Glibc
import Synchronization

/// Watches the sound server (PulseAudio, or PipeWire's PulseAudio service) with libpulse: its
/// sinks, its default sink and its playback streams, from the start and through subscription.
/// Each report is a `PulseObservation`, handed to `report` on libpulse's own thread (a
/// pa_threaded_mainloop), in order.
///
/// When no server runs it tries again, `firstRetryDelay` to `longestRetryDelay` apart, until
/// one answers; when the server goes away it reports `.disconnected` (once) and tries again
/// the same way. It never starts a server (PA_CONTEXT_NOAUTOSPAWN). Owns the mainloop and the
/// context.
///
/// Not PA_CONTEXT_NOFAIL: libpulse then waits for a server on its own, through D-Bus where
/// there is one and by polling where there is not, and a restarted server was seen again only
/// 2 to 5 s after it was back. Trying again ourselves bounds that.
public final class PulseWatcher: @unchecked Sendable {
  private let mainloop: OpaquePointer
  private var context: OpaquePointer?  // mainloop thread, or with its lock held
  private let report: @Sendable (PulseObservation) -> Void
  private let clientName: String
  private let server: String?
  private var closed = false  // mainloop thread, or with its lock held
  /// Set once by `close()`: the mainloop is freed then, so a second call must not touch it.
  private let shutDown = Atomic<Bool>(false)
  /// A pending reconnection (mainloop thread), and how long the next one waits.
  private var retry: OpaquePointer?
  private var retryDelay = PulseWatcher.firstRetryDelay
  /// 250 ms, doubling up to 2 s: a sound server that restarts (an update, a crash, the user's
  /// `systemctl --user restart`) is back within a couple of seconds, and hark must see its
  /// devices and calls again as soon as it is.
  static let firstRetryDelay: UInt64 = 250_000  // µs
  static let longestRetryDelay: UInt64 = 2_000_000  // µs
  /// The next question of the server's default while its owner waits for it
  /// (`askForTheDefault`), and how far apart they are (mainloop thread).
  private var defaultQuestion: OpaquePointer?
  private var defaultInterval: UInt64 = 0
  /// A connection of its own made to ask the default once (`askTheDefaultAfresh`), and the
  /// pending end of the last one (mainloop thread).
  private var probe: OpaquePointer?
  private var probeEnd: OpaquePointer?
  /// Whether `.connected` was reported since the context became ready (mainloop thread).
  private var announced = false
  /// The default sink the long-lived connection last said (mainloop thread).
  private var saidDefault: String?
  /// Whether the context is ready: a failure then is a loss to report (mainloop thread).
  private var isConnected = false

  /// Starts watching `server` (nil: the default, as $PULSE_SERVER or the session's); `report`
  /// is called on libpulse's thread.
  public init?(
    clientName: String, server: String? = nil,
    report: @escaping @Sendable (PulseObservation) -> Void
  ) {
    // libpulse is loaded here, not at every hark's start (CPulse's Loader.c).
    guard cpulse_load() == nil, let ml = pa_threaded_mainloop_new() else { return nil }
    mainloop = ml
    self.report = report
    self.clientName = clientName
    self.server = server
    pa_threaded_mainloop_lock(ml)
    connect()
    pa_threaded_mainloop_unlock(ml)
    guard pa_threaded_mainloop_start(ml) >= 0 else {
      pa_threaded_mainloop_free(ml)
      return nil
    }
  }

  deinit { close() }

  /// Stops the thread and lets go of the server.
  public func close() {
    guard !shutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
    pa_threaded_mainloop_lock(mainloop)
    closed = true
    if let api = pa_threaded_mainloop_get_api(mainloop) {
      if let r = retry { api.pointee.time_free(r) }
      if let q = defaultQuestion { api.pointee.time_free(q) }
      if let e = probeEnd { api.pointee.time_free(e) }
      retry = nil
      defaultQuestion = nil
      probeEnd = nil
    }
    endProbe()
    if let c = context {
      pa_context_set_state_callback(c, nil, nil)
      pa_context_set_subscribe_callback(c, nil, nil)
      pa_context_disconnect(c)
      pa_context_unref(c)
      context = nil
    }
    pa_threaded_mainloop_unlock(mainloop)
    pa_threaded_mainloop_stop(mainloop)
    pa_threaded_mainloop_free(mainloop)
  }

  /// Asks the server for its default sink every `interval` µs from now on, each time on a
  /// connection of its own (`askTheDefaultAfresh`), reported as at a change (`.defaultSink`),
  /// until called with nil: for the owner that waits for a default the server may never say
  /// has changed (`PulseModel.awaitsDefault`). Any thread, the report callback's included.
  public func askForTheDefault(every interval: UInt64?) {
    guard !shutDown.load(ordering: .acquiring) else { return }
    let inThread = pa_threaded_mainloop_in_thread(mainloop) != 0
    if !inThread { pa_threaded_mainloop_lock(mainloop) }
    defer { if !inThread { pa_threaded_mainloop_unlock(mainloop) } }
    guard !closed, let api = pa_threaded_mainloop_get_api(mainloop) else { return }
    if let interval {
      defaultInterval = interval
      if defaultQuestion == nil { scheduleDefaultQuestion() }
    } else if let q = defaultQuestion {
      api.pointee.time_free(q)
      defaultQuestion = nil
    }
  }

  /// Mainloop thread, or with its lock held.
  private func scheduleDefaultQuestion() {
    defaultQuestion = timer(in: defaultInterval) { api, event, _, userdata in
      api?.pointee.time_free(event)
      guard let me = PulseWatcher.from(userdata) else { return }
      me.defaultQuestion = nil
      if me.isConnected { me.askTheDefaultAfresh() }
      me.scheduleDefaultQuestion()
    }
  }

  /// A timer that calls `fired` once, `microseconds` from now, with this watcher as its user
  /// data; `fired` frees it (mainloop thread, or with its lock held).
  private func timer(in microseconds: UInt64, _ fired: pa_time_event_cb_t) -> OpaquePointer? {
    guard let api = pa_threaded_mainloop_get_api(mainloop) else { return nil }
    var when = timeval()
    pa_gettimeofday(&when)
    pa_timeval_add(&when, microseconds)
    return api.pointee.time_new(api, &when, fired, me)
  }

  /// Asks the server's default on a connection made for the question and let go of after it,
  /// as `pactl get-default-sink` does, reported as `.defaultSink` (mainloop thread). PipeWire's
  /// pulse service keeps each client's idea of the default apart, and one long-lived client's
  /// can stay stale: Debian's 0.3.65 answered the session server's own connection with the
  /// speakers, change after change and question after question, after a headset's call ended,
  /// while a new client was told the headset's music sink (a clean-clone run: hark, paused for
  /// the call, never played again). A question already under way is dropped: only the newest
  /// answer is the server's default now.
  private func askTheDefaultAfresh() {
    guard !closed else { return }
    endProbe()
    probe = newContext { c, userdata in PulseWatcher.from(userdata)?.probeStateChanged(c) }
    guard let p = probe else { return }
    if pa_context_connect(p, server, Self.flags, nil) < 0, probe == p { endProbe() }
  }

  private func probeStateChanged(_ c: OpaquePointer?) {
    guard let c, c == probe else { return }
    switch pa_context_get_state(c) {
    case PA_CONTEXT_READY:
      unref(
        pa_context_get_server_info(
          c,
          { c, info, userdata in
            guard let me = PulseWatcher.from(userdata), c == me.probe else { return }
            if let sink = info?.pointee.default_sink_name {
              me.report(.defaultSink(String(cString: sink)))
            }
            // Let go of it outside its own callback.
            me.endProbeSoon()
          }, me))
    case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
      endProbeSoon()
    default:
      break
    }
  }

  /// Mainloop thread, or with its lock held.
  private func endProbe() {
    if let e = probeEnd, let api = pa_threaded_mainloop_get_api(mainloop) {
      api.pointee.time_free(e)
      probeEnd = nil
    }
    guard let p = probe else { return }
    probe = nil
    pa_context_set_state_callback(p, nil, nil)
    pa_context_disconnect(p)
    pa_context_unref(p)
  }

  private func endProbeSoon() {
    guard probeEnd == nil else { return }
    probeEnd = timer(in: 0) { api, event, _, userdata in
      api?.pointee.time_free(event)
      guard let me = PulseWatcher.from(userdata) else { return }
      me.probeEnd = nil
      me.endProbe()
    }
  }

  /// Ends a playback stream at once, in the sound server (pa_context_kill_sink_input): a
  /// stream whose sink went away has been moved to another sink by the server itself, and must
  /// not be heard there while its owner pauses (G5). Its owner sees its output fail and opens a
  /// new stream when the user plays again.
  ///
  /// Not a mute: PulseAudio's module-stream-restore and WirePlumber's restore-stream remember
  /// a stream's mute under the application's name (or role), so every later stream of hark's,
  /// in this run and the next, would start muted. Ending the stream leaves nothing behind.
  /// Any thread, the report callback's included.
  public func kill(sinkInput index: UInt32) {
    guard !shutDown.load(ordering: .acquiring) else { return }
    let inThread = pa_threaded_mainloop_in_thread(mainloop) != 0
    if !inThread { pa_threaded_mainloop_lock(mainloop) }
    if let c = context, !closed { unref(pa_context_kill_sink_input(c, index, nil, nil)) }
    if !inThread { pa_threaded_mainloop_unlock(mainloop) }
  }

  private var me: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

  private static func from(_ p: UnsafeMutableRawPointer?) -> PulseWatcher? {
    p.map { Unmanaged<PulseWatcher>.fromOpaque($0).takeUnretainedValue() }
  }

  /// The watcher never starts a sound server (`init`).
  private static let flags = pa_context_flags_t(rawValue: PA_CONTEXT_NOAUTOSPAWN.rawValue)

  /// A context named as hark's, its state reported to `stateChanged` (with the lock held, or
  /// on the mainloop thread).
  private func newContext(stateChanged: pa_context_notify_cb_t) -> OpaquePointer? {
    let props = pa_proplist_new()
    pa_proplist_sets(props, PA_PROP_APPLICATION_NAME, clientName)
    pa_proplist_sets(props, PA_PROP_APPLICATION_ID, "hark")
    let c = pa_context_new_with_proplist(
      pa_threaded_mainloop_get_api(mainloop), clientName, props)
    pa_proplist_free(props)
    if let c { pa_context_set_state_callback(c, stateChanged, me) }
    return c
  }

  /// With the lock held (or on the mainloop thread).
  private func connect() {
    guard !closed else { return }
    context = newContext { c, userdata in PulseWatcher.from(userdata)?.stateChanged(c) }
    guard let c = context else { return }
    // A connection that fails at once may already have gone through stateChanged (FAILED),
    // which let go of the context; let go of it here only if it did not.
    if pa_context_connect(c, server, Self.flags, nil) < 0, context == c {
      pa_context_set_state_callback(c, nil, nil)
      pa_context_unref(c)
      context = nil
      scheduleReconnect()
    }
  }

  private func stateChanged(_ c: OpaquePointer?) {
    guard let c else { return }
    switch pa_context_get_state(c) {
    case PA_CONTEXT_READY:
      retryDelay = Self.firstRetryDelay
      announced = false
      saidDefault = nil
      isConnected = true
      pa_context_set_subscribe_callback(
        c,
        { c, event, index, userdata in
          PulseWatcher.from(userdata)?.subscribed(c, event, index)
        }, me)
      let mask = pa_subscription_mask_t(
        rawValue: PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue
          | PA_SUBSCRIPTION_MASK_SERVER.rawValue | PA_SUBSCRIPTION_MASK_CLIENT.rawValue)
      unref(pa_context_subscribe(c, mask, nil, nil))
      askServer(c)
      unref(
        pa_context_get_sink_info_list(
          c, { _, info, eol, userdata in PulseWatcher.from(userdata)?.sink(info, eol) }, me))
      // Clients before streams: a stream's process may be known through its client only.
      unref(
        pa_context_get_client_info_list(
          c, { _, info, eol, userdata in PulseWatcher.from(userdata)?.client(info, eol) }, me))
      unref(
        pa_context_get_sink_input_info_list(
          c, { _, info, eol, userdata in PulseWatcher.from(userdata)?.sinkInput(info, eol) }, me))
    case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
      // Said once per connection lost, not for each try that finds no server.
      if isConnected {
        isConnected = false
        report(.disconnected)
      }
      pa_context_set_state_callback(c, nil, nil)
      pa_context_unref(c)
      context = nil
      scheduleReconnect()
    default:
      break
    }
  }

  /// Connects again later: at once could fail at once again (a server address that answers
  /// nobody), in a loop. Waits `firstRetryDelay`, doubling up to `longestRetryDelay`.
  private func scheduleReconnect() {
    guard !closed, retry == nil else { return }
    retry = timer(in: retryDelay) { api, event, _, userdata in
      api?.pointee.time_free(event)
      guard let me = PulseWatcher.from(userdata) else { return }
      me.retry = nil
      me.connect()
    }
    retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
  }

  private func subscribed(
    _ c: OpaquePointer?, _ event: pa_subscription_event_type_t, _ index: UInt32
  ) {
    guard let c else { return }
    let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
    let type = event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
    let removed = type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue
    switch facility {
    case PA_SUBSCRIPTION_EVENT_SINK.rawValue:
      if removed {
        report(.sinkRemoved(index))
      } else {
        unref(
          pa_context_get_sink_info_by_index(
            c, index, { _, info, eol, userdata in PulseWatcher.from(userdata)?.sink(info, eol) },
            me))
      }
    case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue:
      if removed {
        report(.sinkInputRemoved(index))
      } else {
        unref(
          pa_context_get_sink_input_info(
            c, index,
            { _, info, eol, userdata in PulseWatcher.from(userdata)?.sinkInput(info, eol) }, me))
      }
    case PA_SUBSCRIPTION_EVENT_CLIENT.rawValue:
      if removed {
        report(.clientRemoved(index))
      } else {
        unref(
          pa_context_get_client_info(
            c, index,
            { _, info, eol, userdata in PulseWatcher.from(userdata)?.client(info, eol) }, me))
      }
    case PA_SUBSCRIPTION_EVENT_SERVER.rawValue:
      askServer(c)
    default:
      break
    }
  }

  private func askServer(_ c: OpaquePointer) {
    unref(
      pa_context_get_server_info(
        c,
        { _, info, userdata in
          guard let info, let me = PulseWatcher.from(userdata) else { return }
          if !me.announced {
            me.announced = true
            let name = info.pointee.server_name.map { String(cString: $0) } ?? "sound server"
            let version = info.pointee.server_version.map { String(cString: $0) } ?? ""
            me.report(.connected(server: version.isEmpty ? name : "\(name) \(version)"))
          }
          guard let sink = info.pointee.default_sink_name else { return }
          let name = String(cString: sink)
          me.report(.defaultSink(name))
          // A change is asked again on a connection of its own, whose answer comes after
          // this one: the long-lived connection's idea of the default can be stale (see
          // `askTheDefaultAfresh`). PipeWire 1.6's pulse service told it the headset was the
          // default as the headset appeared, while WirePlumber kept the speakers the default
          // and every new client was told so: the session server's current output stayed the
          // headset (two runs in about twenty of the desktop scenarios on it).
          if let said = me.saidDefault, said != name { me.askTheDefaultAfresh() }
          me.saidDefault = name
        }, me))
  }

  private func sink(_ info: UnsafePointer<pa_sink_info>?, _ eol: Int32) {
    guard eol == 0, let i = info?.pointee else { return }
    report(
      .sink(
        index: i.index, name: i.name.map { String(cString: $0) } ?? "",
        description: i.description.map { String(cString: $0) } ?? "",
        properties: Self.properties(i.proplist), card: i.card == UInt32.max ? nil : i.card))
  }

  private func sinkInput(_ info: UnsafePointer<pa_sink_input_info>?, _ eol: Int32) {
    guard eol == 0, let i = info?.pointee else { return }
    report(
      .sinkInput(
        index: i.index, sink: i.sink, client: i.client == UInt32.max ? nil : i.client,
        properties: Self.properties(i.proplist)))
  }

  private func client(_ info: UnsafePointer<pa_client_info>?, _ eol: Int32) {
    guard eol == 0, let i = info?.pointee else { return }
    report(.client(index: i.index, properties: Self.properties(i.proplist)))
  }

  private static func properties(_ list: OpaquePointer?) -> [String: String] {
    guard let list else { return [:] }
    var out: [String: String] = [:]
    var state: UnsafeMutableRawPointer? = nil
    while let key = pa_proplist_iterate(list, &state) {
      if let value = pa_proplist_gets(list, key) {
        out[String(cString: key)] = String(cString: value)
      }
    }
    return out
  }

  private func unref(_ op: OpaquePointer?) {
    if let op { pa_operation_unref(op) }
  }
}

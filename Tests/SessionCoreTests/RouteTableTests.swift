import PropertyBased
import Testing

@testable import SessionCore

/// The outputs list on its own: plugging, unplugging, selecting (G4–G6).
@Suite(.timeLimit(.minutes(2))) struct RouteTableTests {
  static let headphones = Route(name: "Headphones", kind: .headphones)
  static let usb = Route(name: "USB audio", kind: .usb)
  static let hdmi = Route(name: "HDMI", kind: .hdmi)

  @Test func startsWithTheSpeakersOnly() {
    let table = RouteTable()
    #expect(table.available == [.speakers])
    #expect(table.current == .speakers)
  }

  @Test(arguments: RouteKind.allCases.filter { $0 != .speakers })
  func pluggingMakesTheNewDeviceCurrent(kind: RouteKind) throws {
    var table = RouteTable()
    let change = try table.apply(.plug(kind))
    let route = Route(name: kind.defaultName, kind: kind)
    #expect(
      change == RouteChange(reason: .newDeviceAvailable, previous: .speakers, current: route))
    #expect(table.current == route)
    #expect(table.available == [.speakers, route])
  }

  @Test func unpluggingTheCurrentFallsBackToTheLatestRemaining() throws {
    var table = RouteTable()
    _ = try table.apply(.plug(.headphones))
    _ = try table.apply(.plug(.usb))
    _ = try table.apply(.plug(.hdmi))
    let change = try table.apply(.unplug(.hdmi))
    #expect(
      change == RouteChange(reason: .oldDeviceUnavailable, previous: Self.hdmi, current: Self.usb))
    _ = try table.apply(.unplug(.usb))
    #expect(table.current == Self.headphones)
    _ = try table.apply(.unplug(.headphones))
    #expect(table.current == .speakers)
    #expect(table.available == [.speakers])
  }

  @Test func unpluggingTheCurrentFallsBackByArrivalNotBySelection() throws {
    var table = RouteTable()
    _ = try table.apply(.plug(.headphones))
    _ = try table.apply(.plug(.usb))
    _ = try table.apply(.select("Headphones"))
    let change = try table.apply(.unplug(.headphones))
    #expect(change?.current == Self.usb)
  }

  @Test func unpluggingAnotherOutputChangesOnlyTheList() throws {
    var table = RouteTable()
    _ = try table.apply(.plug(.headphones))
    _ = try table.apply(.plug(.usb))
    let change = try table.apply(.unplug(.headphones))
    #expect(change == nil)
    #expect(table.current == Self.usb)
    #expect(table.available == [.speakers, Self.usb])
  }

  @Test(arguments: ["Headphones", "headphones", "HEADPHONES"])
  func selectingByNameOrKindIgnoresCase(name: String) throws {
    var table = RouteTable()
    _ = try table.apply(.plug(.headphones))
    _ = try table.apply(.plug(.usb))
    let change = try table.apply(.select(name))
    #expect(
      change == RouteChange(reason: .override, previous: Self.usb, current: Self.headphones))
  }

  @Test func selectingByKindFindsADeviceWhoseNameDiffers() throws {
    var table = RouteTable()
    _ = try table.apply(.plug(.bluetooth))
    _ = try table.apply(.select("speakers"))
    let change = try table.apply(.select("bluetooth"))
    #expect(change?.current == Route(name: "Bluetooth headset", kind: .bluetooth))
  }

  @Test func selectingTheCurrentOutputIsNoChange() throws {
    var table = RouteTable()
    _ = try table.apply(.plug(.headphones))
    #expect(try table.apply(.select("headphones")) == nil)
    #expect(table.current == Self.headphones)
  }

  @Test func errorsLeaveTheTableAsItWas() throws {
    var table = RouteTable()
    _ = try table.apply(.plug(.headphones))
    let before = table
    #expect(throws: RouteError.alreadyPlugged(Self.headphones)) {
      try table.apply(.plug(.headphones))
    }
    #expect(throws: RouteError.notPlugged(.usb)) { try table.apply(.unplug(.usb)) }
    #expect(throws: RouteError.cannotUnplugSpeakers) { try table.apply(.unplug(.speakers)) }
    #expect(throws: RouteError.noSuchRoute("tv", available: ["Speakers", "Headphones"])) {
      try table.apply(.select("tv"))
    }
    #expect(table == before)
  }

  @Test func errorMessagesNameTheThing() {
    #expect(
      RouteError.alreadyPlugged(Self.headphones).description
        == "'Headphones' is already plugged in")
    #expect(RouteError.notPlugged(.usb).description == "no usb output is plugged in")
    #expect(
      RouteError.cannotUnplugSpeakers.description == "the built-in speakers cannot be unplugged")
  }

  static let actions = Gen.oneOf(
    Gen<RouteKind>.case.map { RouteAction.plug($0) },
    Gen<RouteKind>.case.map { RouteAction.unplug($0) },
    Gen.element(of: ["speakers", "Headphones", "usb", "HDMI", "line", "tv"])
      .map { RouteAction.select($0 ?? "speakers") }
  )

  @Test func randomActionsKeepTheTableConsistent() async {
    await propertyCheck(count: 300, input: Self.actions.array(of: 1...40)) { actions in
      var table = RouteTable()
      for action in actions {
        let before = table
        let change: RouteChange?
        do {
          change = try table.apply(action)
        } catch {
          #expect(table == before, "\(action) failed but changed the table")
          continue
        }
        #expect(table.available.first == .speakers)
        #expect(table.available.contains(table.current))
        #expect(Set(table.available.map(\.kind)).count == table.available.count)
        if let change {
          #expect(change.previous == before.current)
          #expect(change.current == table.current)
          #expect(change.previous != change.current)
        } else {
          #expect(table.current == before.current)
        }
        switch action {
        case .plug(let kind):
          #expect(change?.reason == .newDeviceAvailable)
          #expect(table.current.kind == kind)
        case .unplug(let kind):
          #expect(!table.available.contains { $0.kind == kind })
          let wasCurrent = before.current.kind == kind
          #expect((change != nil) == wasCurrent)
          if wasCurrent {
            #expect(change?.reason == .oldDeviceUnavailable)
            #expect(table.current == table.available.last)
          }
        case .select:
          #expect(change == nil || change?.reason == .override)
        case .attach, .add, .detach:
          Issue.record("real devices are tested apart")
        }
      }
    }
  }

  // MARK: Real devices (the sound server's sinks, the ALSA jacks)

  @Test func G4_aRealDeviceThatAppearsBecomesCurrentOnce() throws {
    var table = RouteTable()
    let headset = Route(name: "WH-1000XM4", kind: .bluetooth)
    let change = try table.apply(.attach(headset))
    #expect(
      change == RouteChange(reason: .newDeviceAvailable, previous: .speakers, current: headset))
    #expect(try table.apply(.attach(headset)) == nil)
    #expect(table.available == [.speakers, headset])
  }

  @Test func G5_aRealDeviceThatGoesFallsBackAndIsForgotten() throws {
    var table = RouteTable()
    let jack = Route(name: "Headphones (HDA Intel)", kind: .headphones)
    let usb = Route(name: "USB DAC", kind: .usb)
    _ = try table.apply(.attach(jack))
    _ = try table.apply(.attach(usb))
    #expect(try table.apply(.detach(jack)) == nil, "not the current output: nobody is told")
    #expect(
      try table.apply(.detach(usb))
        == RouteChange(reason: .oldDeviceUnavailable, previous: usb, current: .speakers))
    #expect(table.available == [.speakers])
    #expect(try table.apply(.detach(usb)) == nil)
    #expect(try table.apply(.detach(.speakers)) == nil, "the speakers stay")
  }

  /// A sound server's sink that appears beside the default one is listed, never made current:
  /// nothing heard moved, so nobody is told (G4), and its going is no loss (G5).
  @Test func G4_G5_aDeviceAddedBesideTheCurrentOneChangesNothingHeard() throws {
    var table = RouteTable()
    let headset = Route(name: "WH-1000XM4", kind: .bluetooth)
    #expect(try table.apply(.add(headset)) == nil)
    #expect(table.current == .speakers)
    #expect(table.available == [.speakers, headset])
    #expect(try table.apply(.add(headset)) == nil)
    #expect(table.available == [.speakers, headset], "listed once")
    #expect(try table.apply(.detach(headset)) == nil, "it was nobody's output")
    #expect(table.available == [.speakers])
    // Made the default later, it is selected like any listed output (G6).
    _ = try table.apply(.add(headset))
    #expect(
      try table.apply(.select("WH-1000XM4"))
        == RouteChange(reason: .override, previous: .speakers, current: headset))
  }
}

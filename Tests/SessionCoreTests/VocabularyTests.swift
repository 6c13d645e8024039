import Testing

@testable import SessionCore

/// The category table in docs/MANNERS.md, and the small value types the policy and the wire
/// share.
@Suite(.timeLimit(.minutes(2))) struct VocabularyTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var category: Category
    var silenced: Bool
    /// Whether it mixes with no options, with mixWithOthers, with duckOthers.
    var mixes: (plain: Bool, mixWithOthers: Bool, duckOthers: Bool)
    var testDescription: String { category.rawValue }
  }

  /// The category table in docs/MANNERS.md, row by row. duckOthers implies mixing where options
  /// apply at all.
  static let table: [Row] = [
    Row(category: .soloAmbient, silenced: true, mixes: (false, false, false)),
    Row(category: .ambient, silenced: true, mixes: (true, true, true)),
    Row(category: .playback, silenced: false, mixes: (false, true, true)),
    Row(category: .record, silenced: false, mixes: (false, false, false)),
    Row(category: .playAndRecord, silenced: false, mixes: (false, true, true)),
    Row(category: .audioProcessing, silenced: false, mixes: (false, false, false)),
  ]

  @Test func tableCoversEveryCategory() {
    #expect(Set(Self.table.map(\.category)) == Set(Category.allCases))
  }

  @Test(arguments: table)
  func G2_categoryTableSaysWhoIsSilencedAndWhoMixes(row: Row) {
    #expect(row.category.isSilencedBySilentMode == row.silenced)
    #expect(row.category.mixes(with: []) == row.mixes.plain)
    #expect(row.category.mixes(with: .mixWithOthers) == row.mixes.mixWithOthers)
    #expect(row.category.mixes(with: .duckOthers) == row.mixes.duckOthers)
    // Options are accepted exactly where the table says they change mixing.
    #expect(row.category.acceptsOptions == (row.mixes.mixWithOthers != row.mixes.plain))
  }

  @Test func sessionRecordDefaultsToSoloAmbientInactive() {
    let record = SessionRecord(identity: AppIdentity(name: "app", pid: 1))
    #expect(record.category == .soloAmbient)
    #expect(record.mode == .default)
    #expect(record.options == [])
    #expect(!record.isActive)
    #expect(!record.isInterrupted)
    #expect(!record.isMixable)
    #expect(!record.isCall)
  }

  @Test(arguments: [
    CategoryOptions(), .mixWithOthers, .duckOthers, [.mixWithOthers, .duckOthers],
  ])
  func categoryOptionsRoundTripThroughTheirNames(options: CategoryOptions) {
    #expect(CategoryOptions(names: options.names) == options)
  }

  @Test func unknownOptionNameIsRejected() {
    #expect(CategoryOptions(names: ["mixWithOthers", "duckEverything"]) == nil)
  }

  static let commands: [RemoteCommand] = [
    .play, .pause, .togglePlayPause, .stop, .nextTrack, .previousTrack, .seekForward,
    .seekBackward, .skipForward(seconds: 15), .skipBackward(seconds: 15),
    .changePlaybackPosition(seconds: 61.5), .volumeUp(percent: 5), .volumeDown(percent: 5),
    .mute, .nextChapter, .previousChapter, .changePlaybackRate(1.5),
  ]

  @Test func everyCommandKindHasACommand() {
    #expect(Set(Self.commands.map(\.kind)) == Set(RemoteCommandKind.allCases))
  }

  @Test(arguments: commands)
  func G19_remoteCommandRoundTripsThroughKindAndArgument(command: RemoteCommand) {
    #expect(RemoteCommand(kind: command.kind, argument: command.argument) == command)
  }

  @Test(arguments: [
    RemoteCommandKind.skipForward, .skipBackward, .changePlaybackPosition, .volumeUp, .volumeDown,
  ])
  func G19_commandWithABadOrMissingArgumentIsNotMadeUp(kind: RemoteCommandKind) {
    #expect(RemoteCommand(kind: kind, argument: nil) == nil)
    #expect(RemoteCommand(kind: kind, argument: -1) == nil)
    #expect(RemoteCommand(kind: kind, argument: .nan) == nil)
    #expect(RemoteCommand(kind: kind, argument: .infinity) == nil)
  }
}

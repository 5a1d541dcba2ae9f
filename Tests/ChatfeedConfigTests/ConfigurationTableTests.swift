import ChangeFeed
import ChatStore
import ChatfeedEngine
import Foundation
import Testing
@testable import ChatfeedConfig

/// The configuration table is the one description of every key: the shipped file, docs/CONFIGURATION.md's
/// table and the option types' defaults agree with it.
///
/// To regenerate `Config/chatfeed.json` and docs/CONFIGURATION.md's table after changing the table:
/// `CHATFEED_WRITE_CONFIG=1 swift test --filter ConfigurationTableTests`.
@Suite struct ConfigurationTableTests {
    static let root: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()
    static let begin = "<!-- BEGIN configuration table (generated from ChatfeedConfig; a test checks it) -->"
    static let end = "<!-- END configuration table -->"
    static var regenerate: Bool { ProcessInfo.processInfo.environment["CHATFEED_WRITE_CONFIG"] == "1" }

    @Test func theShippedFileIsTheTable() throws {
        let path = Self.root + "/Config/chatfeed.json"
        if Self.regenerate { try ChatfeedConfiguration.defaults.jsonText.write(toFile: path, atomically: true, encoding: .utf8) }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == ChatfeedConfiguration.defaults.jsonText)
        #expect(try ChatfeedConfiguration.read(file: path) == .defaults)
    }

    @Test func theReadmeTableIsTheTable() throws {
        let path = Self.root + "/docs/CONFIGURATION.md"
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let start = try #require(text.range(of: Self.begin), "docs/CONFIGURATION.md has no '\(Self.begin)'")
        let stop = try #require(text.range(of: Self.end, range: start.upperBound..<text.endIndex))
        let table = "\n" + ChatfeedConfiguration.markdownTable
        if Self.regenerate {
            text.replaceSubrange(start.upperBound..<stop.lowerBound, with: table)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        #expect(String(text[start.upperBound..<stop.lowerBound]) == table)
    }

    @Test func everyKeyIsInTheTableOnceWithItsDefault() {
        let names = ChatfeedConfiguration.table.map(\.name)
        #expect(Set(names).count == names.count)
        for key in ChatfeedConfiguration.table {
            #expect(!key.summary.isEmpty && !key.summary.contains("\n"), "\(key.name)")
            // The default is valid, and a file holding it reads back the defaults.
            var configuration = ChatfeedConfiguration.defaults
            #expect(throws: Never.self) { try configuration.set(key.name, text: "\(key.value(in: .defaults))".trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
            #expect(configuration == .defaults, "\(key.name)")
        }
    }

    /// An embedder who builds options in code gets the daemon's values (the configuration's
    /// defaults are the option types' own).
    @Test func theDefaultsExistOnce() {
        let daemon = ChatfeedConfiguration.defaults.engineOptions
        let embedded = EngineOptions(databasePath: ChatfeedConfiguration.defaultDatabase)
        #expect(daemon.databasePath == embedded.databasePath)
        #expect(daemon.store == embedded.store)
        #expect(daemon.store.durability == .full && daemon.store.cacheSizeKiB == 65536)
        #expect(daemon.feed.defaultMaxInFlight == embedded.feed.defaultMaxInFlight)
        #expect(daemon.feed.resetThreshold == embedded.feed.resetThreshold)
        #expect(daemon.feed.maxSubscriptions == embedded.feed.maxSubscriptions)
        #expect(daemon.feed.maxPendingChats == embedded.feed.maxPendingChats)
        #expect(daemon.pollIntervalMilliseconds == embedded.pollIntervalMilliseconds)
        #expect(daemon.maxLineBytes == embedded.maxLineBytes)
        #expect(daemon.groupCommitMaxEvents == embedded.groupCommitMaxEvents)
        #expect(daemon.groupCommitMaxMilliseconds == embedded.groupCommitMaxMilliseconds)
        #expect(daemon.groupCommitLingerMicroseconds == embedded.groupCommitLingerMicroseconds)
        #expect(daemon.quickCheckAtStart == embedded.quickCheckAtStart)
        #expect(daemon.checkpointIntervalMilliseconds == embedded.checkpointIntervalMilliseconds)
        #expect(daemon.sessionOutputLimitBytes == embedded.sessionOutputLimitBytes)
        // The store's own defaults are the engine's and the daemon's (durability full, 64 MiB).
        #expect(StoreOptions() == EngineOptions.defaultStore)
        #expect(StoreOptions().durability == .full && StoreOptions().cacheSizeKiB == 65536)
        #expect(ChatfeedConfiguration.defaults.storeOptions == EngineOptions.defaultStore)
        #expect(FeedOptions().maxSubscriptions == ChatfeedConfiguration.defaults.maxSubscriptions)
    }
}

import Foundation
import TestSupport
import Testing
@testable import ChatfeedConfig

@Suite struct ChatfeedConfigurationTests {
    /// `Config/chatfeed.json` of this package, found from this file's path.
    static let repositoryFile: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/Config/chatfeed.json"
    }()

    private func parse(_ text: String) throws(ConfigError) -> ChatfeedConfiguration {
        try ChatfeedConfiguration.parse(Array(text.utf8), source: "test.json")
    }

    private func error(_ text: String) -> ConfigError? {
        do {
            let configuration = try parse(text)
            Issue.record("parsed \(configuration)")
            return nil
        } catch {
            return error
        }
    }

    @Test func defaultsEqualTheShippedFile() throws {
        let file = try ChatfeedConfiguration.read(file: Self.repositoryFile)
        #expect(file == ChatfeedConfiguration.defaults)
        #expect(file == ChatfeedConfiguration())
        // The file names every key.
        let text = try String(contentsOfFile: Self.repositoryFile, encoding: .utf8)
        for key in ChatfeedConfiguration.keys {
            #expect(text.contains("\"\(key)\":"), "\(key) missing from Config/chatfeed.json")
        }
        #expect(text == ChatfeedConfiguration.defaults.jsonText)
    }

    @Test func defaultValues() {
        let defaults = ChatfeedConfiguration.defaults
        #expect(defaults.database == "chatfeed.sqlite")
        #expect(defaults.busyTimeoutMilliseconds == 5000)
        #expect(defaults.durability == .full)
        #expect(defaults.cacheSizeKiB == 65536)
        #expect(defaults.pollIntervalMilliseconds == 20)
        #expect(defaults.maxLineBytes == 1_048_576)
        #expect(defaults.defaultMaxInFlight == 1)
        #expect(defaults.resetThreshold == 1.5)
        #expect(defaults.groupCommitMaxEvents == 1000)
        #expect(defaults.groupCommitLingerMicroseconds == 0)
        #expect(defaults.logLevel == .info)
    }

    /// A gateway's default connections can each hold a subscription, and more (one each was
    /// refused beyond the first 256 when the limit was a single account's).
    @Test func everyDefaultConnectionCanSubscribe() {
        let defaults = ChatfeedConfiguration.defaults
        #expect(defaults.maxSubscriptions >= 4 * defaults.maxConnections)
    }

    @Test func partialFileOverridesOnlyItsKeys() throws {
        let configuration = try parse(#"{"durability": "full", "resetThreshold": 2, "logLevel": "debug", "database": "/tmp/x.db"}"#)
        var expected = ChatfeedConfiguration.defaults
        expected.durability = .full
        expected.resetThreshold = 2
        expected.logLevel = .debug
        expected.database = "/tmp/x.db"
        #expect(configuration == expected)
        #expect(try parse("{}") == .defaults)
        #expect(try parse(#" { "resetThreshold": 0.25 } "#).resetThreshold == 0.25)
        #expect(try parse(#"{"groupCommitLingerMicroseconds": 1000}"#).engineOptions.groupCommitLingerMicroseconds == 1000)
        #expect(try parse(#"{"maxLineBytes": 2048.0}"#).maxLineBytes == 2048)
    }

    @Test func roundTripsThroughItsJSON() throws {
        var configuration = ChatfeedConfiguration()
        configuration.database = "dir with \"quotes\"\\and\ttabs.sqlite"
        configuration.busyTimeoutMilliseconds = 0
        configuration.durability = .full
        configuration.resetThreshold = 0.3
        configuration.logLevel = .critical
        #expect(try parse(configuration.jsonText) == configuration)
    }

    @Test func unknownKey() {
        let failure = error(#"{"busyTimeout": 5}"#)
        #expect(failure?.kind == .unknownKey)
        #expect(failure?.key == "busyTimeout")
        #expect(failure?.description.hasPrefix("configuration error in test.json: 'busyTimeout': unknown key; the keys are database,") == true)
        #expect(error(#"{"loglevel": "info"}"#)?.description
            == "configuration error in test.json: 'loglevel': unknown key; did you mean 'logLevel'?")
    }

    @Test func wrongTypes() {
        let cases: [(String, String, String)] = [
            (#"{"busyTimeoutMilliseconds": "5000"}"#, "busyTimeoutMilliseconds", "must be an integer, not a string"),
            (#"{"busyTimeoutMilliseconds": 1.5}"#, "busyTimeoutMilliseconds", "must be an integer, not a number"),
            (#"{"maxLineBytes": null}"#, "maxLineBytes", "must be an integer, not null"),
            (#"{"database": 5}"#, "database", "must be a file path (string), not an integer"),
            (#"{"durability": true}"#, "durability", #"must be one of "normal", "full", not a boolean"#),
            (#"{"resetThreshold": "1"}"#, "resetThreshold", "must be a number, not a string"),
            (#"{"logLevel": ["info"]}"#, "logLevel", "must be one of \"trace\", \"debug\", \"info\", \"notice\", \"warning\", \"error\", \"critical\", not an array"),
        ]
        for (text, key, message) in cases {
            let failure = error(text)
            #expect(failure?.kind == .wrongType, "\(text)")
            #expect(failure?.key == key, "\(text)")
            #expect(failure?.message == message, "\(text)")
        }
    }

    @Test func outOfRange() {
        let cases: [(String, String, String)] = [
            (#"{"busyTimeoutMilliseconds": -1}"#, "busyTimeoutMilliseconds", "must be at least 0, not -1"),
            (#"{"pollIntervalMilliseconds": 0}"#, "pollIntervalMilliseconds", "must be between 1 and 60000, not 0"),
            (#"{"maxLineBytes": 0}"#, "maxLineBytes", "must be between 1 and 1073741824, not 0"),
            (#"{"defaultMaxInFlight": -2}"#, "defaultMaxInFlight", "must be between 0 and 1000000, not -2"),
            (#"{"groupCommitMaxEvents": 0}"#, "groupCommitMaxEvents", "must be between 1 and 1000000, not 0"),
            (#"{"groupCommitLingerMicroseconds": -1}"#, "groupCommitLingerMicroseconds", "must be between 0 and 1000000, not -1"),
            (#"{"cacheSizeKiB": 99999999999}"#, "cacheSizeKiB", "must be at least 0, not 99999999999"),
            (#"{"resetThreshold": -0.5}"#, "resetThreshold", "must be a number at least 0, not -0.5"),
            (#"{"durability": "fast"}"#, "durability", #"must be one of "normal", "full", not "fast""#),
            (#"{"logLevel": "verbose"}"#, "logLevel", "must be one of \"trace\", \"debug\", \"info\", \"notice\", \"warning\", \"error\", \"critical\", not \"verbose\""),
            (#"{"database": ""}"#, "database", "must not be empty"),
        ]
        for (text, key, message) in cases {
            let failure = error(text)
            #expect(failure?.kind == .outOfRange, "\(text)")
            #expect(failure?.key == key, "\(text)")
            #expect(failure?.message == message, "\(text)")
        }
        #expect(error(#"{"durability": "fast"}"#)?.description
            == #"configuration error in test.json: 'durability': must be one of "normal", "full", not "fast""#)
    }

    @Test func malformedJSON() {
        let cases: [(String, Int, Int)] = [
            ("{\n  \"database\": \"x\",\n}", 3, 1),
            ("{\"a\" 1}", 1, 6),
            ("", 1, 1),
            ("{\n\"maxLineBytes\": 01}", 2, 17),
            ("{\"database\": \"é\", x}", 1, 19),
            ("{} []", 1, 4),
            ("{\"database\": \"unterminated", 1, 27),
        ]
        for (text, line, column) in cases {
            let failure = error(text)
            #expect(failure?.kind == .malformedJSON(line: line, column: column), "\(text.debugDescription): \(String(describing: failure))")
        }
        #expect(error("{\n  \"database\": \"x\",\n}")?.description
            == "configuration error in test.json at line 3, column 1: invalid JSON: unexpected '}', expected a string key")
        let badUTF8 = try? ChatfeedConfiguration.parse(Array("{\"database\": \"".utf8) + [0xC0, 0xAF] + Array("\"}".utf8), source: "b.json")
        #expect(badUTF8 == nil)
        do {
            _ = try ChatfeedConfiguration.parse(Array("{\n\"database\": \"".utf8) + [0xFF] + Array("\"}".utf8), source: "b.json")
        } catch {
            #expect(error.kind == .malformedJSON(line: 2, column: 14))
            #expect(error.message == "the file is not valid UTF-8")
        }
    }

    @Test func notAnObjectAndDuplicates() {
        #expect(error("[]")?.kind == .notAnObject)
        #expect(error("5")?.message == "the file must hold a JSON object, not an integer")
        let duplicate = error(#"{"logLevel": "info", "logLevel": "debug"}"#)
        #expect(duplicate?.kind == .duplicateKey)
        #expect(duplicate?.key == "logLevel")
    }

    @Test func precedence() throws {
        let directory = try TemporaryDirectory()
        let explicit = try directory.write("explicit.json", #"{"logLevel": "error"}"#)
        let fromEnvironment = try directory.write("environment.json", #"{"logLevel": "warning"}"#)
        let fallback = try directory.write("fallback.json", #"{"logLevel": "debug"}"#)
        let environment = [ChatfeedConfiguration.environmentVariable: fromEnvironment]
        let missing = "/nonexistent/chatfeed.json"

        #expect(try ChatfeedConfiguration.load(file: explicit, environment: environment, fallback: fallback).logLevel == .error)
        #expect(try ChatfeedConfiguration.load(file: nil, environment: environment, fallback: fallback).logLevel == .warning)
        #expect(try ChatfeedConfiguration.load(file: nil, environment: [:], fallback: fallback).logLevel == .debug)
        #expect(try ChatfeedConfiguration.load(file: nil, environment: [ChatfeedConfiguration.environmentVariable: ""], fallback: fallback).logLevel == .debug)
        #expect(try ChatfeedConfiguration.load(file: nil, environment: [:], fallback: missing) == .defaults)
        #expect(ChatfeedConfiguration.resolveFile(nil, environment: [:], fallback: missing) == nil)

        // An explicit file, or one named by the environment, must exist.
        #expect(throws: ConfigError(.fileNotFound, source: missing, message: "the file does not exist")) {
            try ChatfeedConfiguration.load(file: missing, environment: environment, fallback: fallback)
        }
        #expect(throws: ConfigError(.fileNotFound, source: missing, message: "the file does not exist")) {
            try ChatfeedConfiguration.load(file: nil, environment: [ChatfeedConfiguration.environmentVariable: missing], fallback: fallback)
        }
        #expect(throws: ConfigError.self) {
            try ChatfeedConfiguration.load(file: directory.url.path, environment: [:])
        }
    }

    @Test func commandLineOverrides() throws {
        var configuration = try ChatfeedConfiguration.parse(Array(#"{"pollIntervalMilliseconds": 50}"#.utf8), source: "f.json")
        configuration.database = "other.sqlite"
        try configuration.set("pollIntervalMilliseconds", text: "5", source: "--poll-interval-milliseconds")
        try configuration.set("resetThreshold", text: "0.5")
        try configuration.set("durability", text: "full")
        #expect(configuration.database == "other.sqlite")
        #expect(configuration.pollIntervalMilliseconds == 5)
        #expect(configuration.resetThreshold == 0.5)
        #expect(configuration.durability == .full)
        #expect(throws: ConfigError(.outOfRange, source: "--poll-interval-milliseconds", key: "pollIntervalMilliseconds",
                                    message: "must be between 1 and 60000, not 0")) {
            try configuration.set("pollIntervalMilliseconds", text: "0", source: "--poll-interval-milliseconds")
        }
        #expect(throws: ConfigError.self) { try configuration.set("maxLineBytes", text: "lots") }
        #expect(throws: ConfigError.self) { try configuration.set("nope", text: "1") }
        try configuration.validate()
        configuration.busyTimeoutMilliseconds = -1
        #expect(throws: ConfigError(.outOfRange, source: "command line", key: "busyTimeoutMilliseconds", message: "must be at least 0, not -1")) {
            try configuration.validate()
        }
    }
}

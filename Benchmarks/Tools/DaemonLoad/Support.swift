import BenchmarkSupport
import ChatModel
import ChatStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// MARK: Time

/// Monotonic nanoseconds.
@inline(__always)
func nowNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func sleepNanoseconds(_ ns: UInt64) {
    var ts = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&ts, &remaining) != 0 && errno == EINTR { ts = remaining }
}

// MARK: Statistics

/// Percentiles of a sample by the nearest-rank method (p in 0...100).
struct Percentiles {
    let sorted: [Double]
    init(_ values: [Double]) { sorted = values.sorted() }
    var count: Int { sorted.count }
    func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
    }
    var median: Double { percentile(50) }
    var max: Double { sorted.last ?? .nan }
    var mean: Double { sorted.isEmpty ? .nan : sorted.reduce(0, +) / Double(sorted.count) }
}

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    guard !s.isEmpty else { return .nan }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func format(_ value: Double, _ digits: Int = 2) -> String {
    String(format: "%.\(digits)f", value)
}

/// "1,234,567"
func grouped(_ value: Int) -> String {
    let digits = String(abs(value))
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return value < 0 ? "-" + out : out
}

// MARK: Random

// MARK: The data set

enum DataSet {
    /// createdAt of the prepared chats and sentAt of their seed messages lie before this.
    static let seedBase: Int64 = 1_700_000_000_000
    /// sentAt of the benchmark's post i is `postBase + i`: later than every seed message, so
    /// every post becomes its chat's last message and moves it to the top.
    static let postBase: Int64 = 1_800_000_000_000

    static func chatID(_ n: Int) -> String {
        let digits = String(n)
        return "chat-" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    }

    /// The number in "chat-0000042", or nil.
    static func chatNumber<S: StringProtocol>(_ id: S) -> Int? {
        guard id.hasPrefix("chat-") else { return nil }
        return Int(id.dropFirst(5))
    }

    /// The post number in "m42" (a benchmark post), or nil (a seed message).
    static func postNumber<S: StringProtocol>(_ id: S) -> Int? {
        guard id.hasPrefix("m") else { return nil }
        return Int(id.dropFirst(1))
    }

    static let words = [
        "ok", "see", "you", "tomorrow", "at", "the", "station", "thanks", "sounds", "good", "lunch",
        "meeting", "moved", "to", "three", "can", "you", "send", "the", "photos", "please", "done",
    ]

    static func text(_ n: Int) -> String {
        var g = SplitMix64(seed: UInt64(n) &* 31 &+ 7)
        let count = 4 + Int(g.next() % 8)
        return (0..<count).map { _ in words[Int(g.next() % UInt64(words.count))] }.joined(separator: " ")
    }

    /// Creates a fresh database at `path` with `chats` chats through `ChatDatabase` group commits
    /// (10,000 events per transaction), and `messagesPerChat` messages in each, so that rows
    /// carry a realistic last message. Returns the seconds it took.
    @discardableResult
    static func prepare(path: String, chats: Int, messagesPerChat: Int, quiet: Bool = false) throws -> Double {
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        let start = nowNanoseconds()
        let store = try ChatDatabase(path: path)
        let groupSize = 10_000
        var g = SplitMix64(seed: 0xC4A7)
        for first in stride(from: 0, to: chats, by: groupSize) {
            let range = first..<min(chats, first + groupSize)
            let events: [ChatEvent] = range.map { n in
                .createChat(id: chatID(n), title: "Chat \(n)", createdAt: seedBase - 1_000_000_000 + Int64(n))
            }
            try check(store.apply(events))
        }
        if messagesPerChat > 0 {
            var pending: [ChatEvent] = []
            pending.reserveCapacity(groupSize)
            for round in 0..<messagesPerChat {
                for n in 0..<chats {
                    let sentAt = seedBase - 1_000_000 * Int64(messagesPerChat - round) + Int64(g.next() % 900_000)
                    pending.append(.postMessage(Message(
                        id: "s\(n)-\(round)", chat: chatID(n), sender: "user\(n % 997)",
                        text: text(n &* 7 &+ round), sentAt: sentAt)))
                    if pending.count == groupSize {
                        try check(store.apply(pending))
                        pending.removeAll(keepingCapacity: true)
                    }
                }
            }
            if !pending.isEmpty { try check(store.apply(pending)) }
        }
        let seconds = Double(nowNanoseconds() - start) / 1e9
        if !quiet {
            FileHandle.standardError.write(Data(
                "prepared \(path): \(grouped(chats)) chats, \(messagesPerChat) message(s) each, in \(format(seconds, 1)) s\n".utf8))
        }
        return seconds
    }

    private static func check(_ results: [Result<EventResult, ChatError>]) throws {
        for case .failure(let error) in results { throw error }
    }
}

// MARK: Files

/// The repository root: the parent of the Benchmarks package (the working directory of
/// `swift run` in `Benchmarks/`), or the working directory itself when it holds `Sources/chatfeedd`.
func repositoryRoot() -> String {
    let cwd = FileManager.default.currentDirectoryPath
    if FileManager.default.fileExists(atPath: cwd + "/Sources/chatfeedd") { return cwd }
    return URL(fileURLWithPath: cwd).deletingLastPathComponent().path
}

func defaultDaemonPath() -> String { repositoryRoot() + "/.build/release/chatfeedd" }
func defaultCLIPath() -> String { repositoryRoot() + "/.build/release/chatfeed" }
func defaultConfigPath() -> String { repositoryRoot() + "/Config/chatfeed.json" }

/// Writes a copy of the configuration file at `source` with the integer settings of `values`
/// replaced (each key must be in the file).
func configCopy(of source: String, setting values: [String: Int]) throws -> String {
    var text = try String(contentsOfFile: source, encoding: .utf8)
    for (key, value) in values.sorted(by: { $0.key < $1.key }) {
        let pattern = try NSRegularExpression(pattern: "\"\(key)\"\\s*:\\s*\\d+")
        let range = NSRange(text.startIndex..., in: text)
        guard pattern.firstMatch(in: text, range: range) != nil else { throw BenchError("no \(key) key in \(source)") }
        text = pattern.stringByReplacingMatches(in: text, range: range, withTemplate: "\"\(key)\": \(value)")
    }
    let path = NSTemporaryDirectory() + "chatfeed-bench-config-\(getpid())-\(values.count)-\(abs(values.description.hashValue)).json"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

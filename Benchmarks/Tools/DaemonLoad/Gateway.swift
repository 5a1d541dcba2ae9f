import BenchmarkSupport
import ChatModel
import ChatStore
import Foundation
import JSONCodec
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// `DaemonLoad gateway fanout|idle|stall|restart` (issue 20's figures): the release
// `chatfeedd --listen` as a child process on a temporary database, driven by WebSocket clients in
// child processes of this tool (`DaemonLoad gateway-clients`, GatewayClients.swift), posts
// written through the daemon's trusted stdin. Results/gateway.md has the method and the figures.

struct GatewayLoadOptions {
    var scenario = ""
    var users: Int?
    var chats: Int?
    var connections: Int?
    var workers: Int?
    var limit: Int?
    var maxInFlight: Int?
    var rates = [2_000, 4_000, 6_000]
    var seconds = 10.0
    var stallSeconds = 60.0
    var postsPerSecond = 1_000
    var pingInterval: Int?
    var port = 18_480
    var daemon = defaultDaemonPath()
    var config = defaultConfigPath()
    var database = NSTemporaryDirectory() + "chatfeed-gateway-bench.sqlite"
    var logLevel = "warning"
    var seed: UInt64 = 20
}

// MARK: Data sets

enum GatewayDataSet {
    /// `users` users (u0…) and `chats` group chats whose sizes follow Zipf's law: the k-th chat
    /// (1-based) has max(2, users ÷ k) members, chosen at random (seeded). One message each.
    static func prepareGroups(path: String, users: Int, chats: Int, seed: UInt64) throws -> [[Int]] {
        var g = SplitMix64(seed: seed)
        var groups: [[Int]] = []
        for k in 1...chats {
            let size = min(users, max(2, users / k))
            var members = Set<Int>()
            while members.count < size { members.insert(Int(g.next() % UInt64(users))) }
            groups.append(members.sorted())
        }
        try prepare(path: path, users: users, groups: groups)
        return groups
    }

    /// `users` users and as many chats of 10 members (chat c: users c…c+9, modulo): every user is
    /// in 10 chats.
    static func prepareRing(path: String, users: Int) throws -> [[Int]] {
        let groups = (0..<users).map { c in (0..<min(10, users)).map { (c + $0) % users } }
        try prepare(path: path, users: users, groups: groups)
        return groups
    }

    private static func prepare(path: String, users: Int, groups: [[Int]]) throws {
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        let start = nowNanoseconds()
        let store = try ChatDatabase(path: path, options: StoreOptions(durability: .normal))
        var pending: [ChatEvent] = []
        func flush() throws {
            for case .failure(let error) in try store.apply(pending) { throw error }
            pending.removeAll(keepingCapacity: true)
        }
        for n in 0..<users {
            pending.append(.createUser(id: "u\(n)", name: "User \(n)", createdAt: DataSet.seedBase))
            if pending.count == 10_000 { try flush() }
        }
        for (c, members) in groups.enumerated() {
            pending.append(.createChat(id: DataSet.chatID(c), title: "Chat \(c)", createdAt: DataSet.seedBase + Int64(c), members: members.map { "u\($0)" }))
            pending.append(.postMessage(Message(
                id: "s\(c)", chat: DataSet.chatID(c), sender: "u\(members[0])", text: "seed",
                sentAt: DataSet.seedBase + 1_000_000 + Int64(c))))
            if pending.count >= 10_000 { try flush() }
        }
        try flush()
        _ = try store.checkpoint(truncate: true)
        FileHandle.standardError.write(Data("prepared \(path): \(grouped(users)) users, \(grouped(groups.count)) chats, \(grouped(groups.reduce(0) { $0 + $1.count })) memberships in \(format(Double(nowNanoseconds() - start) / 1e9, 1)) s\n".utf8))
    }
}

// MARK: The daemon

/// `chatfeedd --listen` with a secret and a configuration of its own; its stdout (the answers to
/// the posts) read and counted on a thread.
final class GatewayDaemon: @unchecked Sendable {
    let process: DaemonProcess
    let port: Int
    let responses = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    init(options: GatewayLoadOptions, config: String) throws {
        port = options.port
        process = try DaemonProcess(
            executable: options.daemon,
            arguments: ["--database", options.database, "--config", config, "--listen", "127.0.0.1:\(options.port)", "--log-level", options.logLevel],
            stderrPath: options.database + ".stderr.log")
        let process = self.process
        let thread = Thread { [self] in
            var lines = LineReader(fd: process.stdoutFD)
            while lines.readLines({ line, _ in
                self.responses.add(1, ordering: .relaxed)
                if line.firstRange(of: #""error""#.utf8) != nil {
                    if self.errors.add(1, ordering: .relaxed).newValue == 1 {
                        FileHandle.standardError.write(Data("daemon error: ".utf8 + Array(line) + [10]))
                    }
                }
            }) {}
            self.done.signal()
        }
        thread.start()
        try waitUntilListening()
    }

    /// Polls a TCP connect until the daemon accepts (20 s at most).
    private func waitUntilListening() throws {
        let deadline = nowNanoseconds() + 20_000_000_000
        while nowNanoseconds() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if rc == 0 { return }
            var status: Int32 = 0
            if waitpid(process.pid, &status, WNOHANG) == process.pid {
                let log = (try? String(contentsOfFile: process.stderrPath, encoding: .utf8)) ?? ""
                throw BenchError("chatfeedd exited before listening (status \(status)): \(log.suffix(2_000))")
            }
            sleepNanoseconds(20_000_000)
        }
        throw BenchError("chatfeedd does not listen on 127.0.0.1:\(port) after 20 s")
    }

    var rssKiB: Int { process.statusKiB("VmRSS") ?? 0 }

    /// SIGTERM, then waits for the exit; after 30 s, says so on stderr and sends SIGKILL (a
    /// shutdown that hangs is a finding, not a reason to leave a daemon behind).
    func stop() {
        process.terminate()
        let deadline = nowNanoseconds() + 30_000_000_000
        var status: Int32 = 0
        while waitpid(process.pid, &status, WNOHANG) == 0 {
            if nowNanoseconds() > deadline {
                note("chatfeedd \(process.pid) did not exit 30 s after SIGTERM: SIGKILL (its log: \(process.stderrPath))")
                kill(process.pid, SIGKILL)
                break
            }
            sleepNanoseconds(50_000_000)
        }
        process.closeInput()
        _ = process.wait()
        done.wait()
    }

    /// SIGKILL, then reaps it.
    func kill9() {
        kill(process.pid, SIGKILL)
        process.closeInput()
        _ = process.wait()
        done.wait()
    }
}

// MARK: The client processes

/// One `DaemonLoad gateway-clients` child process, asked one command at a time.
final class ClientWorker {
    let process: DaemonProcess
    private var buffer: [UInt8] = []

    init(options: GatewayLoadOptions, first: Int, count: Int, source: String, limit: Int, maxInFlight: Int,
         secretFile: String, model: Bool = false, reconnect: Bool = false) throws {
        var arguments = ["gateway-clients", "--port", "\(options.port)", "--source", source, "--first", "\(first)",
                         "--count", "\(count)", "--limit", "\(limit)", "--max-in-flight", "\(maxInFlight)", "--secret-file", secretFile]
        if model { arguments.append("--model") }
        if reconnect { arguments.append("--reconnect") }
        process = try DaemonProcess(executable: selfExecutable(), arguments: arguments,
                                    stderrPath: options.database + ".clients-\(first).log")
    }

    /// Sends `command` and returns the answer line.
    func ask(_ command: String) throws -> String {
        guard process.write(Array((command + "\n").utf8)) else { throw BenchError("the client process is gone (\(command))") }
        return try readLine()
    }

    func readLine() throws -> String {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let n = chunk.withUnsafeMutableBytes { read(process.stdoutFD, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let log = (try? String(contentsOfFile: process.stderrPath, encoding: .utf8)) ?? ""
                throw BenchError("the client process ended: \(log.suffix(1_000))")
            }
            buffer += chunk[0..<n]
        }
    }

    func quit() {
        _ = process.write(Array("quit\n".utf8))
        process.closeInput()
        _ = process.wait()
    }
}

func selfExecutable() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// Asks every worker the same command at once, then reads their answers.
func askAll(_ workers: [ClientWorker], _ command: String) throws -> [String] {
    for worker in workers { guard worker.process.write(Array((command + "\n").utf8)) else { throw BenchError("a client process is gone") } }
    return try workers.map { try $0.readLine() }
}

/// The key=value fields of a worker's answer line.
func fields(_ line: String) -> [String: String] {
    var out: [String: String] = [:]
    for part in line.split(separator: " ").dropFirst() {
        guard let eq = part.firstIndex(of: "=") else { continue }
        out[String(part[..<eq])] = String(part[part.index(after: eq)...])
    }
    return out
}

/// Stats of several workers, summed.
struct ClientStats {
    var batches = 0, resets = 0, errors = 0, ends = 0, open = 0, subscribed = 0
    var closes: [Int: Int] = [:]
    var attempts: [Int: Int] = [:]
    var afterResume: [Int: Int] = [:]
    var structuralAfterResume: [Int: Int] = [:]
    var patterns: [String: Int] = [:]
    var histogram: [Int: Int] = [:]
    var lastBatchAfterClear: UInt64 = 0
    var givenUp = 0, verified = 0, mismatched = 0, resubscribeResets = 0
    var maxVerifiedAt: UInt64 = 0
    var first = ""

    init(_ lines: [String]) {
        func pairs(_ text: String?) -> [(Int, Int)] {
            (text ?? "").split(separator: ",").compactMap { pair in
                let p = pair.split(separator: ":")
                guard p.count == 2, let a = Int(p[0]), let b = Int(p[1]) else { return nil }
                return (a, b)
            }
        }
        for line in lines {
            let f = fields(line)
            batches += Int(f["batches"] ?? "") ?? 0
            resets += Int(f["resets"] ?? "") ?? 0
            errors += Int(f["errors"] ?? "") ?? 0
            ends += Int(f["ends"] ?? "") ?? 0
            open += Int(f["open"] ?? "") ?? 0
            subscribed += Int(f["subscribed"] ?? "") ?? 0
            givenUp += Int(f["givenUp"] ?? "") ?? 0
            verified += Int(f["verified"] ?? "") ?? 0
            mismatched += Int(f["mismatched"] ?? "") ?? 0
            resubscribeResets += Int(f["resubscribeResets"] ?? "") ?? 0
            lastBatchAfterClear = max(lastBatchAfterClear, UInt64(f["lastBatchAfterClear"] ?? "") ?? 0)
            maxVerifiedAt = max(maxVerifiedAt, UInt64(f["maxVerifiedAt"] ?? "") ?? 0)
            for (k, v) in pairs(f["closes"]) { closes[k, default: 0] += v }
            for (k, v) in pairs(f["attempts"]) { attempts[k, default: 0] += v }
            for (k, v) in pairs(f["afterResume"]) { afterResume[k, default: 0] += v }
            for (k, v) in pairs(f["structuralAfterResume"]) { structuralAfterResume[k, default: 0] += v }
            for pair in (f["patterns"] ?? "").split(separator: ",") {
                let p = pair.split(separator: ":")
                if p.count == 2, let n = Int(p[1]) { patterns[String(p[0]), default: 0] += n }
            }
            for (k, v) in pairs(f["hist"]) { histogram[k, default: 0] += v }
            if first.isEmpty, let text = f["first"], !text.isEmpty { first = text }
        }
    }

    /// The latency percentile in ms from the 0.1 ms histogram.
    func percentile(_ p: Double) -> Double {
        let total = histogram.values.reduce(0, +)
        guard total > 0 else { return .nan }
        let rank = Int((p / 100 * Double(total)).rounded(.up))
        var seen = 0
        for bucket in histogram.keys.sorted() {
            seen += histogram[bucket]!
            if seen >= max(rank, 1) { return Double(bucket + 1) / 10 }
        }
        return .nan
    }

    var samples: Int { histogram.values.reduce(0, +) }
    var closeText: String { closes.isEmpty ? "none" : closes.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ") }
}

// MARK: Posts

/// Writes `message.post` requests to the daemon's stdin at `rate` posts/s, 200 ticks a second,
/// for random chats (uniform), from each chat's first member; the text carries the write's
/// monotonic time ("t<ns>"), which the clients subtract from the batch's arrival.
final class PostWriter: @unchecked Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    let written = Atomic<Int>(0)
    /// Members of the chats posted to, summed: the member lists each post reaches.
    let deliveries = Atomic<Int>(0)

    init(daemon: GatewayDaemon, groups: [[Int]], rate: Int, firstPost: Int, seed: UInt64) {
        let thread = Thread { [self] in
            var g = SplitMix64(seed: seed)
            let start = nowNanoseconds()
            var n = firstPost
            var lines: [UInt8] = []
            var tick: UInt64 = 0
            while !self.stopFlag.load(ordering: .relaxed) {
                tick += 1
                let due = Int(Double(rate) * Double(tick) / 200)
                lines.removeAll(keepingCapacity: true)
                let now = nowNanoseconds()
                while self.written.load(ordering: .relaxed) < due {
                    let c = Int(g.next() % UInt64(groups.count))
                    lines += Array(#"{"jsonrpc":"2.0","id":\#(n),"method":"message.post","params":{"chat":"\#(DataSet.chatID(c))","id":"p\#(n)","sender":"u\#(groups[c][0])","text":"t\#(now)","sentAt":\#(DataSet.postBase + Int64(n))}}"#.utf8)
                    lines.append(10)
                    n += 1
                    self.written.add(1, ordering: .relaxed)
                    self.deliveries.add(groups[c].count, ordering: .relaxed)
                }
                if !lines.isEmpty, !daemon.process.write(lines) { break }
                let next = start + tick * 5_000_000
                let now2 = nowNanoseconds()
                if next > now2 { sleepNanoseconds(next - now2) }
            }
            self.finished.signal()
        }
        thread.start()
    }

    func stop() {
        stopFlag.store(true, ordering: .relaxed)
        finished.wait()
    }
}

// MARK: Helpers

/// A copy of the configuration at `source` with these keys set.
func gatewayConfig(of source: String, _ values: [String: JSONValue]) throws -> String {
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source)))
    guard case .object(var object) = try JSONValue(parsing: bytes) else { throw BenchError("\(source): not a JSON object") }
    for (key, value) in values { object[key] = value }
    let path = NSTemporaryDirectory() + "chatfeed-gateway-config-\(getpid()).json"
    try Data(JSONValue.object(object).serialized()).write(to: URL(fileURLWithPath: path))
    return path
}

func writeSecret() throws -> String {
    let path = NSTemporaryDirectory() + "chatfeed-gateway-bench-\(getpid()).secret"
    var g = SplitMix64(seed: UInt64(nowNanoseconds()))
    let secret = (0..<32).map { _ in String(format: "%02x", Int(g.next() & 0xff)) }.joined()
    try secret.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

func uptimeText() -> String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    let parts = text.split(separator: " ").prefix(3)
    var now = time(nil)
    var tm = tm()
    gmtime_r(&now, &tm)
    return String(format: "%02d:%02d:%02d UTC, load average ", tm.tm_hour, tm.tm_min, tm.tm_sec) + parts.joined(separator: ", ")
}

func note(_ text: String) {
    FileHandle.standardError.write(Data("[\(uptimeText())] \(text)\n".utf8))
}

/// Splits `count` clients over `workers` processes, each on its own source address 127.0.0.(2 + i).
func startWorkers(_ o: GatewayLoadOptions, count: Int, workers: Int, limit: Int, maxInFlight: Int, secret: String,
                  model: Bool = false, reconnect: Bool = false) throws -> [ClientWorker] {
    let per = (count + workers - 1) / workers
    return try stride(from: 0, to: count, by: per).enumerated().map { i, first in
        try ClientWorker(options: o, first: first, count: min(per, count - first), source: "127.0.0.\(2 + i)",
                         limit: limit, maxInFlight: maxInFlight, secretFile: secret, model: model, reconnect: reconnect)
    }
}

/// Asks every worker `command` (connect, subscribe), checks that all `count` connections
/// answered ok, and returns the seconds it took.
func stage(_ workers: [ClientWorker], _ command: String, count: Int) throws -> Double {
    let start = nowNanoseconds()
    let lines = try askAll(workers, command)
    let ok = lines.reduce(0) { $0 + (Int(fields($1)["ok"] ?? "") ?? 0) }
    guard ok == count else { throw BenchError("\(command): \(ok) of \(count): \(lines.joined(separator: " | "))") }
    return Double(nowNanoseconds() - start) / 1e9
}

// MARK: Scenarios

func runGateway(_ o: GatewayLoadOptions) throws {
    switch o.scenario {
    case "fanout": try gatewayFanout(o)
    case "idle": try gatewayIdle(o)
    case "stall": try gatewayStall(o)
    case "restart": try gatewayRestart(o)
    default: fail("gateway: the scenario is fanout, idle, stall or restart, not '\(o.scenario)'")
    }
}

/// 1. Fan-out over WebSocket: `users` online with a top-50 window each, posts to Zipf groups.
func gatewayFanout(_ o: GatewayLoadOptions) throws {
    let users = o.users ?? 1_000, chats = o.chats ?? 2_000, limit = o.limit ?? 50, maxInFlight = o.maxInFlight ?? 0
    let groups = try GatewayDataSet.prepareGroups(path: o.database, users: users, chats: chats, seed: o.seed)
    let meanSize = Double(groups.reduce(0) { $0 + $1.count }) / Double(groups.count)
    let secret = try writeSecret()
    let config = try gatewayConfig(of: o.config, ["tokenSecretFile": .string(secret), "maxConnections": .integer(Int64(users + 100))])
    let daemon = try GatewayDaemon(options: o, config: config)
    let workers = try startWorkers(o, count: users, workers: o.workers ?? 1, limit: limit, maxInFlight: maxInFlight, secret: secret)
    defer { for w in workers { w.quit() }; daemon.stop() }
    _ = try stage(workers, "connect", count: users)
    _ = try stage(workers, "subscribe", count: users)
    print("""
        gateway fanout: \(grouped(users)) users online, one WebSocket each with a top-\(limit) window of main (maxInFlight \(maxInFlight)); \
        \(grouped(chats)) chats of Zipf sizes (the k-th: max(2, \(users) ÷ k) members; mean \(format(meanSize, 1))); posts for uniformly random chats \
        through stdin; \(o.workers ?? 1) client process(es); \(ProcessInfo.processInfo.activeProcessorCount) cores
        uptime before: \(uptimeText())

        | posts/s asked | posts/s written | member lists reached/s | member-list batches/s | p50 write→received | p99 | max | daemon CPU | CPU per batch | resets | closes |
        |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
        """)
    var postNumber = 0
    for rate in o.rates {
        // Two seconds of warm-up at the rate, then the measured seconds.
        let writer = PostWriter(daemon: daemon, groups: groups, rate: rate, firstPost: postNumber, seed: o.seed &+ UInt64(rate))
        sleepNanoseconds(2_000_000_000)
        _ = try askAll(workers, "clear")
        let cpu0 = daemon.process.cpuSeconds() ?? 0
        let written0 = writer.written.load(ordering: .relaxed)
        let deliveries0 = writer.deliveries.load(ordering: .relaxed)
        let t0 = nowNanoseconds()
        sleepNanoseconds(UInt64(o.seconds * 1e9))
        let written = writer.written.load(ordering: .relaxed) - written0
        let deliveries = writer.deliveries.load(ordering: .relaxed) - deliveries0
        let elapsed = Double(nowNanoseconds() - t0) / 1e9
        writer.stop()
        postNumber += writer.written.load(ordering: .relaxed)
        // Batches of posts written in the window that arrive after it are counted over their time.
        sleepNanoseconds(500_000_000)
        let stats = ClientStats(try askAll(workers, "stats"))
        let cpu = (daemon.process.cpuSeconds() ?? 0) - cpu0
        let seconds = max(elapsed, Double(stats.lastBatchAfterClear) / 1e9)
        print("| \(grouped(rate)) | \(grouped(Int(Double(written) / elapsed))) | \(grouped(Int(Double(deliveries) / elapsed))) | \(grouped(Int(Double(stats.batches) / seconds))) | \(format(stats.percentile(50))) ms | \(format(stats.percentile(99))) ms | \(format(stats.percentile(100))) ms | \(format(cpu / seconds * 100, 0))% | \(format(cpu / Double(max(stats.batches, 1)) * 1e6, 1)) µs | \(stats.resets) | \(stats.closeText) |")
        if stats.errors > 0 || daemon.errors.load(ordering: .relaxed) > 0 { print("errors: clients \(stats.errors), daemon \(daemon.errors.load(ordering: .relaxed)) — \(stats.first)") }
        sleepNanoseconds(1_000_000_000)
    }
    print("uptime after: \(uptimeText()); daemon peak RSS \(grouped((daemon.process.statusKiB("VmHWM") ?? 0) / 1024)) MiB")
}

/// 2. Memory per idle authenticated connection with one top-20 window.
func gatewayIdle(_ o: GatewayLoadOptions) throws {
    let count = o.connections ?? 19_000, limit = o.limit ?? 20
    let groups = try GatewayDataSet.prepareRing(path: o.database, users: count)
    _ = groups
    let secret = try writeSecret()
    let config = try gatewayConfig(of: o.config, ["tokenSecretFile": .string(secret), "maxConnections": .integer(Int64(count + 500)),
                                                 "maxSubscriptions": .integer(Int64(count + 500))])
    let daemon = try GatewayDaemon(options: o, config: config)
    let workers = try startWorkers(o, count: count, workers: o.workers ?? 3, limit: limit, maxInFlight: o.maxInFlight ?? 1, secret: secret)
    defer { for w in workers { w.quit() }; daemon.stop() }
    print("gateway idle: \(grouped(count)) users, each in 10 chats of 10; one WebSocket per user from \(workers.count) client processes (source addresses 127.0.0.2–\(workers.count + 1)); \(ProcessInfo.processInfo.activeProcessorCount) cores")
    print("uptime before: \(uptimeText())")
    sleepNanoseconds(1_000_000_000)
    let rss0 = daemon.rssKiB
    let connectSeconds = try stage(workers, "connect", count: count)
    sleepNanoseconds(2_000_000_000)
    let rss1 = daemon.rssKiB
    let subscribeSeconds = try stage(workers, "subscribe", count: count)
    sleepNanoseconds(5_000_000_000)
    let rss2 = daemon.rssKiB
    let stats = ClientStats(try askAll(workers, "stats"))
    print("""

        | stage | daemon VmRSS | growth | per connection | time |
        |---|---:|---:|---:|---:|
        | started, no connection | \(grouped(rss0)) KiB | | | |
        | \(grouped(count)) connections upgraded (token checked), no subscription | \(grouped(rss1)) KiB | \(grouped(rss1 - rss0)) KiB | \(format(Double(rss1 - rss0) * 1024 / Double(count) / 1000, 1)) KB | \(format(connectSeconds, 1)) s |
        | each with one top-\(limit) window of main (5 s later) | \(grouped(rss2)) KiB | \(grouped(rss2 - rss0)) KiB | **\(format(Double(rss2 - rss0) * 1024 / Double(count) / 1000, 1)) KB** | \(format(subscribeSeconds, 1)) s |

        open \(grouped(stats.open)), subscribed \(grouped(stats.subscribed)), closes: \(stats.closeText), ends without close \(stats.ends); daemon peak RSS \(grouped((daemon.process.statusKiB("VmHWM") ?? 0) / 1024)) MiB
        uptime after: \(uptimeText())
        """)
}

/// 3. 1,000 readers stop reading for 60 s while posts flow.
func gatewayStall(_ o: GatewayLoadOptions) throws {
    let users = o.users ?? 1_000, chats = o.chats ?? 2_000, limit = o.limit ?? 50, maxInFlight = o.maxInFlight ?? 1
    let groups = try GatewayDataSet.prepareGroups(path: o.database, users: users, chats: chats, seed: o.seed)
    let secret = try writeSecret()
    var settings: [String: JSONValue] = ["tokenSecretFile": .string(secret), "maxConnections": .integer(Int64(users + 100))]
    if let ping = o.pingInterval { settings["pingIntervalSeconds"] = .integer(Int64(ping)) }
    let config = try gatewayConfig(of: o.config, settings)
    let daemon = try GatewayDaemon(options: o, config: config)
    let workers = try startWorkers(o, count: users, workers: o.workers ?? 1, limit: limit, maxInFlight: maxInFlight, secret: secret)
    defer { for w in workers { w.quit() }; daemon.stop() }
    _ = try stage(workers, "connect", count: users)
    _ = try stage(workers, "subscribe", count: users)
    print("gateway stall: \(grouped(users)) users online (top-\(limit) windows, maxInFlight \(maxInFlight), acking), \(grouped(o.postsPerSecond)) posts/s to \(grouped(chats)) Zipf groups; every client stops reading for \(Int(o.stallSeconds)) s\(o.pingInterval.map { "; pingIntervalSeconds \($0)" } ?? ""); \(ProcessInfo.processInfo.activeProcessorCount) cores")
    print("uptime before: \(uptimeText())")
    let writer = PostWriter(daemon: daemon, groups: groups, rate: o.postsPerSecond, firstPost: 0, seed: o.seed)
    sleepNanoseconds(5_000_000_000)
    let before = ClientStats(try askAll(workers, "stats"))
    let rss0 = daemon.rssKiB
    _ = try askAll(workers, "pause")
    let pauseStart = nowNanoseconds()
    var peak = rss0
    var samples: [Int] = []
    // Posts flow for all but the last second of the pause, so that every commit is sent (or
    // coalesced) when the clients read again, exactly `stallSeconds` after they stopped.
    var stopped = false
    while Double(nowNanoseconds() - pauseStart) / 1e9 < o.stallSeconds - 0.05 {
        sleepNanoseconds(min(1_000_000_000, UInt64(max(0, o.stallSeconds * 1e9 - Double(nowNanoseconds() - pauseStart)))))
        if !stopped, Double(nowNanoseconds() - pauseStart) / 1e9 >= o.stallSeconds - 1.01 {
            writer.stop()
            stopped = true
        }
        let rss = daemon.rssKiB
        peak = max(peak, rss)
        samples.append(rss)
    }
    if !stopped { writer.stop() }
    let posted = writer.written.load(ordering: .relaxed)
    let rssEnd = daemon.rssKiB
    _ = try askAll(workers, "clear")
    _ = try askAll(workers, "resume")
    // Until the daemon answered every post (it may still be behind: its commits make the
    // batches) and then no notification came for 2 s (60 s at most).
    var after = ClientStats(try askAll(workers, "stats"))
    var quietSince = nowNanoseconds()
    let resumed = quietSince
    var caughtUp: UInt64 = 0
    while nowNanoseconds() - quietSince < 2_000_000_000 || caughtUp == 0, nowNanoseconds() - resumed < 60_000_000_000 {
        if caughtUp == 0, daemon.responses.load(ordering: .relaxed) >= posted {
            caughtUp = nowNanoseconds()
            quietSince = caughtUp
        }
        sleepNanoseconds(250_000_000)
        let next = ClientStats(try askAll(workers, "stats"))
        if next.batches + next.resets != after.batches + after.resets { quietSince = nowNanoseconds() }
        after = next
    }
    print("""

        | | value |
        |---|---:|
        | daemon VmRSS when the readers stopped | \(grouped(rss0)) KiB |
        | peak during the \(Int(o.stallSeconds)) s (sampled each second) | \(grouped(peak)) KiB (**+\(format(Double(peak - rss0) / 1024, 1)) MiB**) |
        | at the end of the stall (posts stopped 1 s before it) | \(grouped(rssEnd)) KiB |
        | posts written (whole run) | \(grouped(posted)) |
        | notifications per client after reading again (count: clients) | \(after.afterResume.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")) |
        | … of which structural (count: clients) | \(after.structuralAfterResume.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")) |
        | their kinds in order (S structural, U pure updates, R reset: clients) | \(after.patterns.sorted { $0.value > $1.value }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")) |
        | the daemon had answered every post, after reading again | \(caughtUp == 0 ? "not within 60 s" : format(Double(caughtUp - resumed) / 1e9, 2) + " s") |
        | the last notification, after reading again | \(format(Double(after.lastBatchAfterClear) / 1e9, 2)) s |
        | resets after reading again / before | \(after.resets) / \(before.resets) |
        | closes, ends without close (whole run) | \(after.closeText), \(after.ends) |
        | connections open at the end | \(grouped(after.open)) of \(grouped(users)) |

        RSS each second of the stall (MiB): \(samples.map { format(Double($0) / 1024, 0) }.joined(separator: " "))
        uptime after: \(uptimeText())
        """)
}

/// 4. kill -9 with `connections` clients, a restart: every client back, resumed and checked.
func gatewayRestart(_ o: GatewayLoadOptions) throws {
    let count = o.connections ?? 10_000, limit = o.limit ?? 20
    let groups = try GatewayDataSet.prepareRing(path: o.database, users: count)
    let secret = try writeSecret()
    let config = try gatewayConfig(of: o.config, ["tokenSecretFile": .string(secret), "maxConnections": .integer(Int64(count + 500)),
                                                 "maxSubscriptions": .integer(Int64(count + 500))])
    var daemon = try GatewayDaemon(options: o, config: config)
    let workers = try startWorkers(o, count: count, workers: o.workers ?? 2, limit: limit, maxInFlight: 0, secret: secret,
                                   model: true, reconnect: true)
    defer { for w in workers { w.quit() }; daemon.stop() }
    _ = try stage(workers, "connect", count: count)
    _ = try stage(workers, "subscribe", count: count)
    print("gateway restart: \(grouped(count)) users online from \(workers.count) client processes, top-\(limit) windows (maxInFlight 0), each client keeping its rows; \(grouped(o.postsPerSecond)) posts/s for 3 s, then kill -9 and a restart on the same database and port; \(ProcessInfo.processInfo.activeProcessorCount) cores")
    print("uptime before: \(uptimeText())")
    let writer = PostWriter(daemon: daemon, groups: groups, rate: o.postsPerSecond, firstPost: 0, seed: o.seed)
    sleepNanoseconds(3_000_000_000)
    let killedAt = nowNanoseconds()
    daemon.kill9()
    writer.stop()
    let posted = writer.written.load(ordering: .relaxed)
    daemon = try GatewayDaemon(options: o, config: config)
    let listening = Double(nowNanoseconds() - killedAt) / 1e9
    var stats = ClientStats([])
    let deadline = killedAt + 30_000_000_000
    var progress: [(seconds: Double, equal: Int)] = []
    while nowNanoseconds() < deadline {
        sleepNanoseconds(250_000_000)
        stats = ClientStats(try askAll(workers, "stats"))
        progress.append((Double(nowNanoseconds() - killedAt) / 1e9, stats.verified))
        if stats.verified + stats.mismatched + stats.givenUp >= count { break }
    }
    /// When `share` of the clients were equal (to the 250 ms of the polls).
    func reached(_ share: Double) -> String {
        progress.first { Double($0.equal) >= share * Double(count) }.map { format($0.seconds, 2) + " s" } ?? "—"
    }
    let lastSeconds = stats.maxVerifiedAt > killedAt ? Double(stats.maxVerifiedAt - killedAt) / 1e9 : .nan
    print("""

        | | value |
        |---|---:|
        | posts written before the kill | \(grouped(posted)) |
        | the new daemon listening after the kill | \(format(listening, 2)) s |
        | clients resubscribed with `known` and equal to `chats.list` | \(grouped(stats.verified)) of \(grouped(count)) |
        | … different from `chats.list` | \(stats.mismatched) |
        | equal after the kill: 50% / 90% / 99% (polled every 250 ms) | \(reached(0.5)) / \(reached(0.9)) / \(reached(0.99)) |
        | the last one equal, after the kill | **\(format(lastSeconds, 2)) s** |
        | resets (notifications / resubscribes answered with `items`) | \(stats.resets) / \(stats.resubscribeResets) |
        | attempts per client (attempts: clients) | \(stats.attempts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")) |
        | clients that gave up (more than 3 attempts) | \(stats.givenUp) |
        | closes seen by the clients | \(stats.closeText); \(grouped(stats.ends)) ends without a close frame |

        uptime after: \(uptimeText())
        """)
    if !stats.first.isEmpty { print("first problem: \(stats.first)") }
}

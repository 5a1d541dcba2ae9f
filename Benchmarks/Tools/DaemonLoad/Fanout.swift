import ChatModel
import ChatStore
import Foundation
import JSONCodec
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `DaemonLoad fanout` (issue 19): a post to a chat of M members end to end through the daemon's
/// stdin, with every member subscribed to their main list.
struct FanoutOptions {
    var members = [2, 10, 100, 1_000, 10_000]
    /// Posts per group size; nil: enough for about `batches` member-list batches (20 to 2,000 posts).
    var posts: Int?
    var batches = 200_000
    /// Posts written at once, waiting for every batch of the group before the next: 1 is
    /// lockstep (each post's latency alone); more measures a saturated input.
    var group = 1
    var daemon = defaultDaemonPath()
    var config = defaultConfigPath()
    var database = NSTemporaryDirectory() + "chatfeed-fanout-bench.sqlite"
    var logLevel = "warning"

    func posts(members: Int) -> Int {
        posts ?? min(2_000, max(20, batches / members))
    }
}

struct FanoutResult {
    var members = 0
    var posts = 0
    var batches = 0
    var seconds = 0.0
    var subscribeSeconds = 0.0
    /// From writing a post to each member's batch that shows it, in ms.
    var latency = Percentiles([])
    var daemonCPUSeconds = 0.0
    var daemonPeakRSSKiB = 0
    var errors = 0
    var firstError: String?
    /// Members whose unread counters after the run (the chat's `unread` and the list's
    /// `unread.messages` in their `chats.list`) differ from a count of the posts since their own
    /// last one, out of `members`.
    var counterMismatches = 0

    var batchesPerSecond: Double { Double(batches) / seconds }
    var postsPerSecond: Double { Double(posts) / seconds }
    /// Posts shown to members per second: each post reaches every member, several posts of one
    /// commit in one batch.
    var deliveriesPerSecond: Double { Double(posts) * Double(members) / seconds }
}

/// What the reader thread counts; the main thread waits on it.
private final class FanoutState: @unchecked Sendable {
    let members: Int
    /// The group's last post: batches that show it complete the group.
    let target = Atomic<Int>(-1)
    let shownTarget = Atomic<Int>(0)
    let responses = Atomic<Int>(0)
    let subscribed = Atomic<Int>(0)
    let signal = DispatchSemaphore(value: 0)
    /// When the group was written (monotonic ns), read by the reader after `target` changed.
    let writtenAt = Atomic<UInt64>(0)
    // Reader only; read by the main thread after the run.
    var batches = 0
    var latencies: [Double] = []
    var errors = 0
    var firstError: String?
    /// Each member's `chats.list` after the run (the counters check): the chat's `unread` and the
    /// list's `unread.messages`, by member; `listed` counts them.
    var counters: [Int: (chat: Int?, list: Int?)] = [:]
    let listed = Atomic<Int>(0)

    init(members: Int) { self.members = members }
}

private let lastMessagePrefix = Array(#""lastMessage":{"id":"m"#.utf8)
private let listResponsePrefix = Array(#"{"jsonrpc":"2.0","id":"c"#.utf8)
private let listMessagesPrefix = Array(#""messages":"#.utf8)
private let itemsPrefix = Array(#""items":["#.utf8)
private let unreadPrefix = Array(#""unread":"#.utf8)
private let notificationPrefix = Array(#"{"jsonrpc":"2.0","method":"feed."#.utf8)

/// The decimal number after the first `prefix` in `line` (from `start` on).
private func number(after prefix: [UInt8], in line: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
    guard line.count >= prefix.count else { return nil }
    var start = start
    while start + prefix.count <= line.count {
        if line[start] == prefix[0], line[start..<(start + prefix.count)].elementsEqual(prefix) {
            var i = start + prefix.count
            var value = 0
            var digits = 0
            while i < line.count, line[i] >= 48, line[i] <= 57 {
                value = value * 10 + Int(line[i] - 48)
                i += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        start += 1
    }
    return nil
}

private func handle(_ line: UnsafeRawBufferPointer, at now: UInt64, state: FanoutState) {
    if line.starts(with: notificationPrefix) {
        state.batches += 1
        guard let post = number(after: lastMessagePrefix, in: line) else { return }
        let target = state.target.load(ordering: .acquiring)
        if post <= target {
            state.latencies.append(Double(now - state.writtenAt.load(ordering: .acquiring)) / 1e6)
        }
        if post == target {
            state.shownTarget.add(1, ordering: .releasing)
            state.signal.signal()
        }
        return
    }
    if line.starts(with: listResponsePrefix), let member = number(after: listResponsePrefix, in: line) {
        // {"jsonrpc":"2.0","id":"c7","result":{…,"unread":{"chats":1,"messages":N,…},"items":[{…,"unread":N,"revision":…}]}}
        let list = number(after: listMessagesPrefix, in: line)
        let items = line.firstRange(of: itemsPrefix)
        let chat = items.flatMap { number(after: unreadPrefix, in: line, from: $0.upperBound) }
        state.counters[member] = (chat, list)
        state.listed.add(1, ordering: .releasing)
        state.signal.signal()
        return
    }
    if line.firstRange(of: #""error""#.utf8) != nil {
        state.errors += 1
        if state.firstError == nil { state.firstError = String(decoding: line, as: UTF8.self) }
    } else if line.firstRange(of: #""subscription""#.utf8) != nil {
        state.subscribed.add(1, ordering: .releasing)
    } else {
        state.responses.add(1, ordering: .releasing)
    }
    state.signal.signal()
}

/// Waits until `done` holds, or fails after `seconds`.
private func wait(_ state: FanoutState, _ what: String, seconds: Double = 300, until done: () -> Bool) throws {
    let deadline = DispatchTime.now() + seconds
    while !done() {
        if state.errors > 0 { throw BenchError("the daemon answered an error: \(state.firstError ?? "")") }
        if state.signal.wait(timeout: deadline) == .timedOut, !done() { throw BenchError("timed out waiting for \(what)") }
    }
}

/// A store of `members` users, all members of the chat "group", and nothing else.
private func prepareFanout(path: String, members: Int) throws {
    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    let store = try ChatDatabase(path: path, options: StoreOptions(durability: .normal))
    let users = (0..<members).map { "user-\($0)" }
    for first in stride(from: 0, to: members, by: 10_000) {
        let events = users[first..<min(members, first + 10_000)].map {
            ChatEvent.createUser(id: $0, name: $0, createdAt: DataSet.seedBase)
        }
        for case .failure(let error) in try store.apply(Array(events)) { throw error }
    }
    try store.apply(.createChat(id: "group", title: "Group", createdAt: DataSet.seedBase, members: users))
    _ = try store.checkpoint(truncate: true)
}

/// A copy of the configuration at `source` that allows `subscriptions` subscriptions.
private func configCopy(of source: String, maxSubscriptions: Int) throws -> String {
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source)))
    guard case .object(var object) = try JSONValue(parsing: bytes) else { throw BenchError("\(source): not a JSON object") }
    object["maxSubscriptions"] = .integer(maxSubscriptions)
    let path = NSTemporaryDirectory() + "chatfeed-fanout-config-\(getpid()).json"
    try Data(JSONValue.object(object).serialized()).write(to: URL(fileURLWithPath: path))
    return path
}

func runFanout(_ options: FanoutOptions, members: Int) throws -> FanoutResult {
    let posts = options.posts(members: members)
    try prepareFanout(path: options.database, members: members)
    let config = try configCopy(of: options.config, maxSubscriptions: members + 16)
    let state = FanoutState(members: members)
    let daemon = try DaemonProcess(
        executable: options.daemon,
        arguments: ["--database", options.database, "--config", config, "--log-level", options.logLevel],
        stderrPath: options.database + ".stderr.log")
    defer {
        daemon.closeInput()
        _ = daemon.wait()
    }
    let readerDone = DispatchSemaphore(value: 0)
    let reader = Thread {
        var lines = LineReader(fd: daemon.stdoutFD)
        while lines.readLines({ line, now in handle(line, at: now, state: state) }) {}
        readerDone.signal()
    }
    reader.stackSize = 4 << 20
    reader.start()

    // Every member subscribes to their main list; no acks are needed (maxInFlight 0).
    let subscribeStart = nowNanoseconds()
    var request: [UInt8] = []
    for member in 0..<members {
        request += Array(#"{"jsonrpc":"2.0","id":"s\#(member)","method":"feed.subscribe","params":{"user":"user-\#(member)","maxInFlight":0}}"#.utf8) + [10]
        if request.count > 1 << 16 || member == members - 1 {
            daemon.write(request)
            request.removeAll(keepingCapacity: true)
        }
    }
    try wait(state, "\(members) subscriptions") { state.subscribed.load(ordering: .acquiring) == members }
    let subscribeSeconds = Double(nowNanoseconds() - subscribeStart) / 1e9

    let cpuStart = daemon.cpuSeconds() ?? 0
    let start = nowNanoseconds()
    var posted = 0
    while posted < posts {
        let count = min(options.group, posts - posted)
        var lines: [UInt8] = []
        for i in posted..<(posted + count) {
            lines += Array(#"{"jsonrpc":"2.0","id":\#(i),"method":"message.post","params":{"chat":"group","id":"m\#(i)","sender":"user-\#(i % members)","text":"\#(DataSet.text(i))","sentAt":\#(DataSet.postBase + Int64(i))}}"#.utf8) + [10]
        }
        state.shownTarget.store(0, ordering: .releasing)
        state.writtenAt.store(nowNanoseconds(), ordering: .releasing)
        state.target.store(posted + count - 1, ordering: .releasing)
        daemon.write(lines)
        posted += count
        try wait(state, "the batches of posts up to m\(posted - 1)") {
            state.shownTarget.load(ordering: .acquiring) == members && state.responses.load(ordering: .acquiring) == posted
        }
    }
    let seconds = Double(nowNanoseconds() - start) / 1e9
    let cpu = (daemon.cpuSeconds() ?? 0) - cpuStart
    let peak = daemon.statusKiB("VmHWM") ?? 0

    // The counters check: every member's unread is the number of posts since their own last one
    // (a post is read for its sender, unread for every other member).
    for member in 0..<members {
        request += Array(#"{"jsonrpc":"2.0","id":"c\#(member)","method":"chats.list","params":{"user":"user-\#(member)"}}"#.utf8) + [10]
        if request.count > 1 << 16 || member == members - 1 {
            daemon.write(request)
            request.removeAll(keepingCapacity: true)
        }
    }
    try wait(state, "\(members) chat lists") { state.listed.load(ordering: .acquiring) == members }
    daemon.closeInput()
    readerDone.wait()
    unlink(config)
    var mismatches = 0
    for member in 0..<members {
        let lastOwn = member < posts ? member + (posts - 1 - member) / members * members : -1
        let expected = posts - 1 - lastOwn
        let counted = state.counters[member]
        if counted?.chat != expected || counted?.list != expected { mismatches += 1 }
    }
    return FanoutResult(
        members: members, posts: posts, batches: state.batches, seconds: seconds, subscribeSeconds: subscribeSeconds,
        latency: Percentiles(state.latencies), daemonCPUSeconds: cpu, daemonPeakRSSKiB: peak,
        errors: state.errors, firstError: state.firstError, counterMismatches: mismatches)
}

func printFanoutHeader(_ options: FanoutOptions) {
    print("""
        fanout: one chat of M members, every member subscribed to their main list (maxInFlight 0), \
        posts from each member in turn, \(options.group == 1 ? "lockstep (each post's batches before the next)" : "groups of \(options.group) posts"); \
        \(ProcessInfo.processInfo.activeProcessorCount) cores; daemon \(options.daemon); config \(options.config)
        | members | posts | posts/s | member-list batches/s | posts shown to members/s | p50 post→batch | p99 post→batch | daemon CPU per post | subscribe all | peak RSS | counter mismatches |
        |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
        """)
}

func printFanout(_ r: FanoutResult) {
    print("| \(grouped(r.members)) | \(grouped(r.posts)) | \(grouped(Int(r.postsPerSecond))) | \(grouped(Int(r.batchesPerSecond))) | \(grouped(Int(r.deliveriesPerSecond))) | \(format(r.latency.median)) ms | \(format(r.latency.percentile(99))) ms | \(format(r.daemonCPUSeconds / Double(r.posts) * 1000)) ms | \(format(r.subscribeSeconds)) s | \(grouped(r.daemonPeakRSSKiB / 1024)) MiB | \(r.counterMismatches) of \(grouped(r.members)) |")
}

import Foundation
import SQLite

#if canImport(Glibc)
import Glibc
#endif

// DaemonLoad: end-to-end benchmarks of the release `chatfeedd` as a child process.
//
// The ordo-one harness repeats a closure many times in one process; these measure one long
// run of another process (throughput, per-post latency percentiles, start-up, resident memory),
// so they are a plain executable. Run from Benchmarks/ after building the daemon in the root:
//
//   (cd .. && swift build -c release --product chatfeedd)
//   swift run -c release DaemonLoad ingest  [options]
//   swift run -c release DaemonLoad startup [options]
//   swift run -c release DaemonLoad users   [options]

let usage = """
    usage: DaemonLoad ingest [--chats 10000] [--messages-per-chat 1] [--posts 100000] [--max-in-flight 1] [--limit N]
                             [--rate POSTS_PER_S (0: as fast as the pipe takes them)] [--window N (0: unbounded)]
                             [--duration 60] [--lines-per-write 1] [--runs 1] [--seed 1]
                             [--database PATH] [--reuse-database] [--daemon PATH] [--config FILE] [--log-level L]
                             [--cli-writers N (processes running `chatfeed send` meanwhile)] [--cli PATH]
           DaemonLoad raw [--chats 10000] [--messages-per-chat 1] [--posts 100000] [--group 400] [--runs 1] [--seed 1]
                          [--rate POSTS_PER_S (0: unpaced)] [--duration 10]
                          [--autocheckpoint PAGES (1000)] [--durability full|normal] [--database PATH]
                          [--page-size BYTES (VACUUM first)] [--prepare-sql SQL (run before the posts)]
                          [--memstatus on|off (SQLite's memory statistics; chatfeedd turns them off)]
           DaemonLoad fanout [--members 2,10,100,1000,10000] [--posts N (default: about --batches batches)] [--batches 200000]
                             [--group 1 (posts written at once)] [--database PATH] [--daemon PATH] [--config FILE]
           DaemonLoad startup [--chats 1000000] [--messages-per-chat 1] [--runs 5] [--database PATH] [--fresh]
                              [--cache-kib N] [--daemon PATH] [--config FILE]
           DaemonLoad users [--users 100000] [--chats 100000] [--members 10] [--subscribed 1000]
                            [--database PATH] [--fresh] [--daemon PATH] [--config FILE]
           DaemonLoad gateway fanout [--users 1000] [--chats 2000] [--limit 50] [--max-in-flight 0] [--rates 2000,4000,6000]
                                     [--seconds 10] [--workers 1]
           DaemonLoad gateway idle [--connections 19000] [--limit 20] [--workers 3]
           DaemonLoad gateway stall [--users 1000] [--chats 2000] [--limit 50] [--posts-per-second 1000] [--stall-seconds 60]
                                    [--ping-interval S]
           DaemonLoad gateway restart [--connections 10000] [--limit 20] [--posts-per-second 1000] [--workers 2]
             (each: [--port 18480] [--database PATH] [--daemon PATH] [--config FILE] [--log-level L] [--seed 20])

    ingest: prepares a database of --chats chats through ChatDatabase, starts chatfeedd on it, subscribes
      to the full list with maxInFlight --max-in-flight and acks every notification as it arrives,
      writes --posts message.post requests for random chats, and reports posts per second and the
      latency from each post's write to its response and to the first notification that shows it.
    raw: the baseline of ingest's bytes written per post: the same posts written into the same prepared
      database by raw libsqlite3 calls in transactions of --group posts, SQLite checkpointing by itself.
      With --rate, paced as ingest --rate: each transaction takes the posts due when the last one ended
      (at most --group); the latency from each post's due time to its COMMIT's end is reported.
    fanout: for each M of --members, a database of M users who are all members of one chat; chatfeedd
      on it with every member subscribed to their main list (maxInFlight 0); posts from each member in
      turn, --group at a time, each group's batches awaited before the next: member-list batches per
      second and the latency from a post's write to each member's batch that shows it.
    startup: the time from spawning chatfeedd to its first response and its first write, and its
      resident memory, on a database of --chats chats and on an empty one; the large one both after a
      clean stop (the quick check skipped) and without the clean stop's record (checked, as after a crash).
    users: issue 19's figures besides fanout (Users.swift says how): resident memory with every user idle,
      a user's first subscribe at 100, 1,000 and 10,000 chats, memory per subscribed user.
    gateway: issue 20's figures over WebSocket (Gateway.swift says how): `chatfeedd --listen` as a child process,
      WebSocket clients in child processes of this tool (`DaemonLoad gateway-clients`, one epoll thread each),
      posts through the daemon's stdin. fanout: member-list batches/s and write→received latency; idle: memory
      per idle authenticated connection with one window; stall: readers that stop reading while posts flow;
      restart: kill -9 and a restart with every client resuming with `known` and checked against chats.list.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("DaemonLoad: \(message)\n".utf8))
    exit(2)
}

signal(SIGPIPE, SIG_IGN)
guard CommandLine.arguments.count > 1 else { print(usage); exit(2) }
let command = CommandLine.arguments[1]
let arguments = Array(CommandLine.arguments.dropFirst(2))

/// Reads one mode's options in order: `next()` gives an option's name, `value()`, `int()` and
/// `double()` the argument after it; every error names the option.
struct OptionReader {
    let arguments: [String]
    var index = -1

    init(_ arguments: [String]) { self.arguments = arguments }

    var option: String { arguments[index] }

    mutating func next() -> String? {
        index += 1
        return index < arguments.count ? arguments[index] : nil
    }

    mutating func value() -> String {
        let name = option
        index += 1
        guard index < arguments.count else { fail("\(name) needs a value") }
        return arguments[index]
    }

    mutating func int() -> Int {
        let name = option
        let text = value().replacingOccurrences(of: "_", with: "").replacingOccurrences(of: ",", with: "")
        guard let n = Int(text) else { fail("\(name): not an integer: \(text)") }
        return n
    }

    mutating func double() -> Double {
        let name = option
        let text = value().replacingOccurrences(of: "_", with: "")
        guard let n = Double(text) else { fail("\(name): not a number: \(text)") }
        return n
    }

    /// `-h`/`--help` prints the usage; any other option no case took is an error.
    func unknown() -> Never {
        if option == "-h" || option == "--help" { print(usage); exit(0) }
        fail("unknown option \(option)\n\(usage)")
    }
}

do {
    switch command {
    case "ingest":
        var o = IngestOptions()
        var options = OptionReader(arguments)
        while let option = options.next() {
            switch option {
            case "--chats": o.chats = options.int()
            case "--messages-per-chat": o.messagesPerChat = options.int()
            case "--posts": o.posts = options.int()
            case "--max-in-flight": o.maxInFlight = options.int()
            case "--limit": o.limit = options.int()
            case "--rate": o.rate = options.double()
            case "--window": o.window = options.int()
            case "--duration": o.durationSeconds = options.double()
            case "--lines-per-write": o.linesPerWrite = max(1, options.int())
            case "--runs": o.runs = max(1, options.int())
            case "--seed": o.seed = UInt64(options.int())
            case "--database": o.database = options.value()
            case "--reuse-database": o.reuseDatabase = true
            case "--daemon": o.daemon = options.value()
            case "--config": o.config = options.value()
            case "--log-level": o.logLevel = options.value()
            case "--cli-writers": o.cliWriters = options.int()
            case "--cli": o.cli = options.value()
            default: options.unknown()
            }
        }
        if o.chats < 1 || o.posts < 1 { fail("--chats and --posts must be at least 1") }
        print("""
            ingest: \(grouped(o.chats)) chats, \(grouped(o.posts)) message.post for random chats, one \
            \(o.limit.map { "top-\($0) window" } ?? "full-list") subscription with maxInFlight \(o.maxInFlight), rate \(o.rate > 0 ? "\(grouped(Int(o.rate)))/s" : "unlimited"), \
            window \(o.window > 0 ? "\(o.window)" : "unbounded"), \(o.linesPerWrite) line(s) per write; \
            \(ProcessInfo.processInfo.activeProcessorCount) cores; daemon \(o.daemon); config \(o.config)
            """)
        var results: [IngestResult] = []
        for run in 1...o.runs {
            let result = try runIngest(o, run: run)
            printIngest(result, run: run)
            results.append(result)
        }
        printIngestSummary(results, options: o)
    case "raw":
        var o = RawIngestOptions()
        var options = OptionReader(arguments)
        while let option = options.next() {
            switch option {
            case "--chats": o.chats = options.int()
            case "--messages-per-chat": o.messagesPerChat = options.int()
            case "--posts": o.posts = options.int()
            case "--group": o.group = max(1, options.int())
            case "--rate": o.rate = options.double()
            case "--duration": o.durationSeconds = options.double()
            case "--runs": o.runs = max(1, options.int())
            case "--seed": o.seed = UInt64(options.int())
            case "--autocheckpoint": o.autoCheckpointPages = options.int()
            case "--durability": o.durability = options.value()
            case "--page-size": o.pageSize = options.int()
            case "--prepare-sql": o.prepareSQL = options.value()
            case "--database": o.database = options.value()
            case "--memstatus":
                switch options.value() {
                case "on": o.memoryStatistics = true
                case "off": o.memoryStatistics = false
                case let other: fail("--memstatus: on or off, not \(other)")
                }
            default: options.unknown()
            }
        }
        // Before this process first uses SQLite (the database is prepared through it).
        if !o.memoryStatistics, !SQLiteLibrary.disableMemoryStatistics() { fail("--memstatus off: SQLite was already in use") }
        print("raw: \(grouped(o.chats)) chats, \(o.rate > 0 ? "paced at \(grouped(Int(o.rate)))/s for \(format(o.durationSeconds, 0)) s" : "\(grouped(o.posts)) posts") for random chats, transactions of \(o.rate > 0 ? "at most " : "")\(o.group), wal_autocheckpoint \(o.autoCheckpointPages), durability \(o.durability), memstatus \(o.memoryStatistics ? "on" : "off")")
        var bytes: [Double] = []
        for run in 1...o.runs {
            let result = try runRawIngest(o, run: run)
            printRawIngest(result, options: o, run: run)
            bytes.append(Double(result.writtenBytes) / Double(max(result.posts, 1)))
        }
        if o.runs > 1 { print("median of \(o.runs) runs: \(grouped(Int(median(bytes)))) bytes/post") }
    case "fanout":
        var o = FanoutOptions()
        var options = OptionReader(arguments)
        while let option = options.next() {
            switch option {
            case "--members":
                let text = options.value()
                o.members = text.split(separator: ",").map { Int($0.replacingOccurrences(of: "_", with: "")) ?? 0 }
                if o.members.contains(where: { $0 < 1 }) { fail("--members: positive integers separated by commas, not \(text)") }
            case "--posts": o.posts = max(1, options.int())
            case "--batches": o.batches = max(1, options.int())
            case "--group": o.group = max(1, options.int())
            case "--database": o.database = options.value()
            case "--daemon": o.daemon = options.value()
            case "--config": o.config = options.value()
            case "--log-level": o.logLevel = options.value()
            default: options.unknown()
            }
        }
        printFanoutHeader(o)
        for members in o.members {
            let result = try runFanout(o, members: members)
            if result.errors > 0 { fail("\(result.errors) error(s), the first: \(result.firstError ?? "")") }
            printFanout(result)
        }
    case "startup":
        var o = StartupOptions()
        var options = OptionReader(arguments)
        while let option = options.next() {
            switch option {
            case "--chats": o.chats = options.int()
            case "--messages-per-chat": o.messagesPerChat = options.int()
            case "--runs": o.runs = max(1, options.int())
            case "--database": o.database = options.value()
            case "--fresh": o.fresh = true
            case "--cache-kib": o.cacheSizeKiB = options.int()
            case "--daemon": o.daemon = options.value()
            case "--config": o.config = options.value()
            default: options.unknown()
            }
        }
        try runStartup(o)
    case "users":
        var o = UsersOptions()
        var options = OptionReader(arguments)
        while let option = options.next() {
            switch option {
            case "--users": o.users = options.int()
            case "--chats": o.chats = options.int()
            case "--members": o.members = max(1, options.int())
            case "--subscribed": o.subscribed = options.int()
            case "--database": o.database = options.value()
            case "--fresh": o.fresh = true
            case "--daemon": o.daemon = options.value()
            case "--config": o.config = options.value()
            default: options.unknown()
            }
        }
        try runUsers(o)
    case "gateway":
        var o = GatewayLoadOptions()
        var options = OptionReader(arguments)
        o.scenario = options.next() ?? ""
        while let option = options.next() {
            switch option {
            case "--users": o.users = options.int()
            case "--chats": o.chats = options.int()
            case "--connections": o.connections = options.int()
            case "--workers": o.workers = max(1, options.int())
            case "--limit": o.limit = options.int()
            case "--max-in-flight": o.maxInFlight = options.int()
            case "--rates":
                let text = options.value()
                o.rates = text.split(separator: ",").map { Int($0.replacingOccurrences(of: "_", with: "")) ?? 0 }
                if o.rates.contains(where: { $0 < 1 }) { fail("--rates: positive integers separated by commas, not \(text)") }
            case "--seconds": o.seconds = options.double()
            case "--stall-seconds": o.stallSeconds = options.double()
            case "--posts-per-second": o.postsPerSecond = options.int()
            case "--ping-interval": o.pingInterval = options.int()
            case "--port": o.port = options.int()
            case "--seed": o.seed = UInt64(options.int())
            case "--database": o.database = options.value()
            case "--daemon": o.daemon = options.value()
            case "--config": o.config = options.value()
            case "--log-level": o.logLevel = options.value()
            default: options.unknown()
            }
        }
        try runGateway(o)
    case "gateway-clients":
        var o = ClientOptions()
        var options = OptionReader(arguments)
        while let option = options.next() {
            switch option {
            case "--port": o.port = options.int()
            case "--host": o.host = options.value()
            case "--source": o.source = options.value()
            case "--first": o.firstUser = options.int()
            case "--count": o.count = options.int()
            case "--limit": o.limit = options.int()
            case "--max-in-flight": o.maxInFlight = options.int()
            case "--secret-file": o.secretFile = options.value()
            case "--model": o.model = true
            case "--reconnect": o.reconnect = true
            case "--max-attempts": o.maxAttempts = options.int()
            case "--concurrency": o.concurrency = max(1, options.int())
            default: options.unknown()
            }
        }
        try GatewayClients(options: o).run()
    case "-h", "--help", "help":
        print(usage)
    default:
        fail("unknown command \(command)\n\(usage)")
    }
} catch {
    fail("\(error)")
}

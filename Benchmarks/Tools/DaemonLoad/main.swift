import Foundation

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

let usage = """
    usage: DaemonLoad ingest [--chats 10000] [--messages-per-chat 1] [--posts 100000] [--max-in-flight 1] [--limit N]
                             [--rate POSTS_PER_S (0: as fast as the pipe takes them)] [--window N (0: unbounded)]
                             [--duration 60] [--lines-per-write 1] [--runs 1] [--seed 1]
                             [--database PATH] [--reuse-database] [--daemon PATH] [--config FILE] [--log-level L]
                             [--cli-writers N (processes running `chatfeed send` meanwhile)] [--cli PATH]
           DaemonLoad raw [--chats 10000] [--messages-per-chat 1] [--posts 100000] [--group 400] [--runs 1] [--seed 1]
                          [--autocheckpoint PAGES (1000)] [--durability full|normal] [--database PATH]
                          [--page-size BYTES (VACUUM first)] [--prepare-sql SQL (run before the posts)]
           DaemonLoad startup [--chats 1000000] [--messages-per-chat 1] [--runs 5] [--database PATH] [--fresh]
                              [--cache-kib N] [--daemon PATH] [--config FILE]

    ingest: prepares a database of --chats chats through ChatDatabase, starts chatfeedd on it, subscribes
      to the full list with maxInFlight --max-in-flight and acks every notification as it arrives,
      writes --posts message.post requests for random chats, and reports posts per second and the
      latency from each post's write to its response and to the first notification that shows it.
    raw: the baseline of ingest's bytes written per post: the same posts written into the same prepared
      database by raw libsqlite3 calls in transactions of --group posts, SQLite checkpointing by itself.
    startup: the time from spawning chatfeedd to its first response, and its resident memory,
      on a database of --chats chats and on an empty one.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("DaemonLoad: \(message)\n".utf8))
    exit(2)
}

signal(SIGPIPE, SIG_IGN)
guard CommandLine.arguments.count > 1 else { print(usage); exit(2) }
let command = CommandLine.arguments[1]
let arguments = Array(CommandLine.arguments.dropFirst(2))

func value(_ name: String, _ index: inout Int) -> String {
    index += 1
    guard index < arguments.count else { fail("\(name) needs a value") }
    return arguments[index]
}
func int(_ name: String, _ index: inout Int) -> Int {
    let text = value(name, &index).replacingOccurrences(of: "_", with: "").replacingOccurrences(of: ",", with: "")
    guard let n = Int(text) else { fail("\(name): not an integer: \(text)") }
    return n
}
func double(_ name: String, _ index: inout Int) -> Double {
    let text = value(name, &index).replacingOccurrences(of: "_", with: "")
    guard let n = Double(text) else { fail("\(name): not a number: \(text)") }
    return n
}

do {
    switch command {
    case "ingest":
        var o = IngestOptions()
        var i = 0
        while i < arguments.count {
            switch arguments[i] {
            case "--chats": o.chats = int("--chats", &i)
            case "--messages-per-chat": o.messagesPerChat = int("--messages-per-chat", &i)
            case "--posts": o.posts = int("--posts", &i)
            case "--max-in-flight": o.maxInFlight = int("--max-in-flight", &i)
            case "--limit": o.limit = int("--limit", &i)
            case "--rate": o.rate = double("--rate", &i)
            case "--window": o.window = int("--window", &i)
            case "--duration": o.durationSeconds = double("--duration", &i)
            case "--lines-per-write": o.linesPerWrite = max(1, int("--lines-per-write", &i))
            case "--runs": o.runs = max(1, int("--runs", &i))
            case "--seed": o.seed = UInt64(int("--seed", &i))
            case "--database": o.database = value("--database", &i)
            case "--reuse-database": o.reuseDatabase = true
            case "--daemon": o.daemon = value("--daemon", &i)
            case "--config": o.config = value("--config", &i)
            case "--log-level": o.logLevel = value("--log-level", &i)
            case "--cli-writers": o.cliWriters = int("--cli-writers", &i)
            case "--cli": o.cli = value("--cli", &i)
            case "-h", "--help": print(usage); exit(0)
            default: fail("unknown option \(arguments[i])\n\(usage)")
            }
            i += 1
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
        var i = 0
        while i < arguments.count {
            switch arguments[i] {
            case "--chats": o.chats = int("--chats", &i)
            case "--messages-per-chat": o.messagesPerChat = int("--messages-per-chat", &i)
            case "--posts": o.posts = int("--posts", &i)
            case "--group": o.group = max(1, int("--group", &i))
            case "--runs": o.runs = max(1, int("--runs", &i))
            case "--seed": o.seed = UInt64(int("--seed", &i))
            case "--autocheckpoint": o.autoCheckpointPages = int("--autocheckpoint", &i)
            case "--durability": o.durability = value("--durability", &i)
            case "--page-size": o.pageSize = int("--page-size", &i)
            case "--prepare-sql": o.prepareSQL = value("--prepare-sql", &i)
            case "--database": o.database = value("--database", &i)
            case "-h", "--help": print(usage); exit(0)
            default: fail("unknown option \(arguments[i])\n\(usage)")
            }
            i += 1
        }
        print("raw: \(grouped(o.chats)) chats, \(grouped(o.posts)) posts for random chats, transactions of \(o.group), wal_autocheckpoint \(o.autoCheckpointPages), durability \(o.durability)")
        var bytes: [Double] = []
        for run in 1...o.runs {
            let result = try runRawIngest(o, run: run)
            printRawIngest(result, options: o, run: run)
            bytes.append(Double(result.writtenBytes) / Double(max(result.posts, 1)))
        }
        if o.runs > 1 { print("median of \(o.runs) runs: \(grouped(Int(median(bytes)))) bytes/post") }
    case "startup":
        var o = StartupOptions()
        var i = 0
        while i < arguments.count {
            switch arguments[i] {
            case "--chats": o.chats = int("--chats", &i)
            case "--messages-per-chat": o.messagesPerChat = int("--messages-per-chat", &i)
            case "--runs": o.runs = max(1, int("--runs", &i))
            case "--database": o.database = value("--database", &i)
            case "--fresh": o.fresh = true
            case "--cache-kib": o.cacheSizeKiB = int("--cache-kib", &i)
            case "--daemon": o.daemon = value("--daemon", &i)
            case "--config": o.config = value("--config", &i)
            case "-h", "--help": print(usage); exit(0)
            default: fail("unknown option \(arguments[i])\n\(usage)")
            }
            i += 1
        }
        try runStartup(o)
    case "-h", "--help", "help":
        print(usage)
    default:
        fail("unknown command \(command)\n\(usage)")
    }
} catch {
    fail("\(error)")
}

import ChatStore
import Foundation
import JSONCodec
import WireProtocol

#if canImport(Glibc)
import Glibc
#endif

struct StartupOptions {
    var chats = 1_000_000
    var messagesPerChat = 1
    var runs = 5
    var daemon = defaultDaemonPath()
    var config = defaultConfigPath()
    var database = NSTemporaryDirectory() + "chatfeed-startup-bench.sqlite"
    /// Prepare the database again even when one with the same parameters exists.
    var fresh = false
    /// Override of the configuration's cacheSizeKiB (SQLite page cache of the connection).
    var cacheSizeKiB: Int?
}

struct StartupSample {
    /// posix_spawn → the first response (`chats.list` with limit 1).
    var firstResponseMilliseconds: Double
    /// posix_spawn → the answer to a write sent with the first request (a `chat.markRead` of a
    /// chat that does not exist: it changes nothing). Writes wait for the start-up's quick check.
    var firstWriteMilliseconds: Double
    /// The `server.stats` that follows.
    var statsMilliseconds: Double
    /// End of stdin → exit.
    var shutdownMilliseconds: Double
    var rssKiB: Int
    var hwmKiB: Int
    var anonKiB: Int
    var fileKiB: Int
    var chats: Int
}

/// Starts the daemon on `database` and measures the start-up (one sample).
func measureStartup(daemonPath: String, config: String, database: String) throws -> StartupSample {
    let daemon = try DaemonProcess(
        executable: daemonPath,
        arguments: ["--database", database, "--config", config, "--log-level", "warning"],
        stderrPath: database + ".stderr.log")
    // Queued at once: the daemon answers the read as soon as it has loaded the list, and the
    // write once the quick check has passed.
    daemon.write(Array((#"{"jsonrpc":"2.0","id":-1,"method":"chats.list","params":{"limit":1}}"# + "\n").utf8))
    daemon.write(Array((#"{"jsonrpc":"2.0","id":-3,"method":"chat.markRead","params":{"chat":"no such chat"}}"# + "\n").utf8))
    var reader = LineReader(fd: daemon.stdoutFD)

    // Responses by id, with the time each line was read (several may come in one read).
    var responses: [Int64: (JSONValue, UInt64)] = [:]
    func response(id: Int) throws -> (JSONValue, UInt64) {
        while responses[Int64(id)] == nil {
            guard reader.readLines({ line, now in
                if let value = try? JSONValue(parsing: line), let id = value["id"]?.int64Value { responses[id] = (value, now) }
            }) else { throw BenchError("chatfeedd ended before answering; see \(database).stderr.log") }
        }
        return responses[Int64(id)]!
    }

    let (list, firstAt) = try response(id: -1)
    let firstResponse = Double(firstAt - daemon.spawnedAt) / 1e6
    let chats = Int(list["result"]?["total"]?.int64Value ?? -1)
    let (_, writeAt) = try response(id: -3)
    let firstWrite = Double(writeAt - daemon.spawnedAt) / 1e6
    // Memory after the load and the check (whose connection and page cache are gone then).
    let rss = daemon.statusKiB("VmRSS") ?? 0
    let hwm = daemon.statusKiB("VmHWM") ?? 0
    let anon = daemon.statusKiB("RssAnon") ?? 0
    let file = daemon.statusKiB("RssFile") ?? 0

    let statsStart = nowNanoseconds()
    daemon.write(Array((#"{"jsonrpc":"2.0","id":-2,"method":"server.stats"}"# + "\n").utf8))
    let (_, statsAt) = try response(id: -2)
    let stats = Double(statsAt - statsStart) / 1e6

    let closeStart = nowNanoseconds()
    daemon.closeInput()
    while reader.readLines({ _, _ in }) {}
    let status = daemon.wait()
    let shutdown = Double(nowNanoseconds() - closeStart) / 1e6
    if status != 0 { throw BenchError("chatfeedd exited with status \(status); see \(database).stderr.log") }
    return StartupSample(
        firstResponseMilliseconds: firstResponse, firstWriteMilliseconds: firstWrite, statsMilliseconds: stats, shutdownMilliseconds: shutdown,
        rssKiB: rss, hwmKiB: hwm, anonKiB: anon, fileKiB: file, chats: chats)
}

/// Prepares (or reuses) the database of `chats` chats; a marker file records its parameters.
func ensureDatabase(path: String, chats: Int, messagesPerChat: Int, fresh: Bool) throws {
    let marker = path + ".params"
    let wanted = "chats=\(chats) messagesPerChat=\(messagesPerChat)"
    if !fresh, FileManager.default.fileExists(atPath: path),
       (try? String(contentsOfFile: marker, encoding: .utf8)) == wanted {
        FileHandle.standardError.write(Data("reusing \(path) (\(wanted))\n".utf8))
        // A file of an earlier schema is migrated here, not by a measured start.
        _ = try ChatDatabase(path: path)
        return
    }
    unlink(marker)
    try DataSet.prepare(path: path, chats: chats, messagesPerChat: messagesPerChat)
    try wanted.write(toFile: marker, atomically: true, encoding: .utf8)
}

func runStartup(_ options: StartupOptions) throws {
    var config = options.config
    if let kib = options.cacheSizeKiB { config = try configCopy(of: options.config, setting: ["cacheSizeKiB": kib]) }
    let emptyPath = options.database + ".empty.sqlite"
    try ensureDatabase(path: emptyPath, chats: 0, messagesPerChat: 0, fresh: options.fresh)
    try ensureDatabase(path: options.database, chats: options.chats, messagesPerChat: options.messagesPerChat, fresh: options.fresh)
    if let size = try? FileManager.default.attributesOfItem(atPath: options.database)[.size] as? Int {
        print("database \(options.database): \(grouped(options.chats)) chats, \(options.messagesPerChat) message(s) each, \(format(Double(size) / 1_048_576, 1)) MiB; config \(config)")
    }

    // `checked`: each start finds no clean-stop record (as after a crash or another program's
    // write) and runs the quick check beside the load; otherwise each start finds the record of
    // the clean stop before it and skips the check (docs/DECISIONS.md, "The quick check after a
    // clean stop").
    func measure(_ label: String, _ path: String, checked: Bool = false) throws -> [StartupSample] {
        // One unmeasured start warms the page cache and the binary (and, checked, the pages
        // only the check reads).
        if checked { CleanStopRecord.remove(forDatabaseAt: path) }
        _ = try measureStartup(daemonPath: options.daemon, config: config, database: path)
        var samples: [StartupSample] = []
        for run in 1...options.runs {
            if checked { CleanStopRecord.remove(forDatabaseAt: path) }
            let s = try measureStartup(daemonPath: options.daemon, config: config, database: path)
            samples.append(s)
            print("\(label) run \(run): \(grouped(s.chats)) chats; first response after \(format(s.firstResponseMilliseconds, 1)) ms, first write \(format(s.firstWriteMilliseconds, 1)) ms; server.stats \(format(s.statsMilliseconds, 1)) ms; shutdown \(format(s.shutdownMilliseconds, 1)) ms; VmRSS \(grouped(s.rssKiB)) KiB (anon \(grouped(s.anonKiB)), file \(grouped(s.fileKiB))), VmHWM \(grouped(s.hwmKiB)) KiB")
        }
        return samples
    }

    let empty = try measure("empty", emptyPath)
    let checked = try measure(grouped(options.chats) + " checked", options.database, checked: true)
    let full = try measure(grouped(options.chats) + " after a clean stop", options.database)
    func med(_ samples: [StartupSample], _ f: (StartupSample) -> Double) -> Double { median(samples.map(f)) }
    let rssDelta = med(full) { Double($0.rssKiB) } - med(empty) { Double($0.rssKiB) }
    let anonDelta = med(full) { Double($0.anonKiB) } - med(empty) { Double($0.anonKiB) }
    let hwmDelta = med(full) { Double($0.hwmKiB) } - med(empty) { Double($0.hwmKiB) }
    print("""
        medians of \(options.runs) runs (after one warm-up start each; database files in the page cache):
          empty database:   first response \(format(med(empty) { $0.firstResponseMilliseconds }, 1)) ms, VmRSS \(format(med(empty) { Double($0.rssKiB) } / 1024, 1)) MiB
          \(grouped(options.chats)) chats, checked (no clean-stop record): first response \(format(med(checked) { $0.firstResponseMilliseconds }, 1)) ms, first write \(format(med(checked) { $0.firstWriteMilliseconds }, 1)) ms, VmHWM \(format(med(checked) { Double($0.hwmKiB) } / 1024, 1)) MiB
          \(grouped(options.chats)) chats after a clean stop: first response \(format(med(full) { $0.firstResponseMilliseconds }, 1)) ms, first write \(format(med(full) { $0.firstWriteMilliseconds }, 1)) ms, VmRSS \(format(med(full) { Double($0.rssKiB) } / 1024, 1)) MiB (anon \(format(med(full) { Double($0.anonKiB) } / 1024, 1)) MiB), VmHWM \(format(med(full) { Double($0.hwmKiB) } / 1024, 1)) MiB, server.stats \(format(med(full) { $0.statsMilliseconds }, 1)) ms, shutdown \(format(med(full) { $0.shutdownMilliseconds }, 1)) ms
          per chat: \(format(rssDelta * 1024 / Double(options.chats), 0)) bytes of VmRSS (\(format(anonDelta * 1024 / Double(options.chats), 0)) anonymous; peak \(format(hwmDelta * 1024 / Double(options.chats), 0)))
        """)
}

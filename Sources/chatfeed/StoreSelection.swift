import ArgumentParser
import ChatStore
import Foundation

/// `--database` and `--config`, shared by every command.
///
/// Until the ChatfeedConfig module lands, `--config` is read here with the few keys the store
/// needs: `database`, `busyTimeoutMilliseconds`, `durability` (`normal|full`). Swap
/// `StoreSelection.resolve()` for ChatfeedConfig's loader then.
struct StoreSelection: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String?

    @Option(name: .long, help: ArgumentHelp("A configuration file (JSON).", valueName: "file"))
    var config: String?

    static let defaultDatabasePath = "chatfeed.sqlite"

    /// The database path and store options: flags over the config file over the defaults.
    func resolve() throws -> (path: String, options: StoreOptions) {
        var path = Self.defaultDatabasePath
        var options = StoreOptions()
        if let config {
            let object: Any
            do {
                object = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: config)))
            } catch {
                throw CLIFailure(message: "cannot read config file '\(config)': \(error.localizedDescription)")
            }
            guard let settings = object as? [String: Any] else {
                throw CLIFailure(message: "config file '\(config)' must hold a JSON object")
            }
            if let value = settings["database"] {
                guard let string = value as? String, !string.isEmpty else {
                    throw CLIFailure(message: "config file '\(config)': 'database' must be a non-empty string")
                }
                path = string
            }
            if let value = settings["busyTimeoutMilliseconds"] {
                guard let number = value as? Int, number >= 0 else {
                    throw CLIFailure(message: "config file '\(config)': 'busyTimeoutMilliseconds' must be an integer ≥ 0")
                }
                options.busyTimeoutMilliseconds = number
            }
            if let value = settings["durability"] {
                guard let name = value as? String, let durability = StoreOptions.Durability(rawValue: name) else {
                    throw CLIFailure(message: "config file '\(config)': 'durability' must be \"normal\" or \"full\"")
                }
                options.durability = durability
            }
        }
        if let database { path = database }
        return (path, options)
    }

    /// Opens the store, creating the file when `create` and it is missing.
    func openStore(create: Bool = false, readOnly: Bool = false) throws -> ChatStore {
        try reportingFailures {
            var (path, options) = try resolve()
            if !create, !FileManager.default.fileExists(atPath: path) {
                throw CLIFailure(message: "no database at '\(path)'; create it with 'chatfeed init --database \(path)'")
            }
            options.readOnly = readOnly
            return try ChatStore(path: path, options: options)
        }
    }
}

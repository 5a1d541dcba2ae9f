import Benchmark
import BenchmarkSupport
import ListDiff

/// A row of the benchmark lists.
struct Row: DiffableItem, Hashable {
    var id: Int
    var revision: Int
}

/// A list of `count` rows and a new list with 10% of them deleted, inserted, moved to a random
/// place and revision-changed (fixed seed).
func mixedPair(count: Int) -> (old: [Row], new: [Row]) {
    var generator = SplitMix64(seed: 42)
    let old = (0..<count).map { Row(id: $0, revision: 0) }
    var new = old
    let changes = count / 10
    for _ in 0..<changes { new.remove(at: Int.random(in: 0..<new.count, using: &generator)) }
    for id in count..<(count + changes) {
        new.insert(Row(id: id, revision: 0), at: Int.random(in: 0...new.count, using: &generator))
    }
    for _ in 0..<changes {
        let row = new.remove(at: Int.random(in: 0..<new.count, using: &generator))
        new.insert(row, at: Int.random(in: 0...new.count, using: &generator))
    }
    for _ in 0..<changes { new[Int.random(in: 0..<new.count, using: &generator)].revision += 1 }
    return (old, new)
}

/// The bottom row moved to the top and changed.
func bumpPair(count: Int) -> (old: [Row], new: [Row]) {
    let old = (0..<count).map { Row(id: $0, revision: 0) }
    var new = old
    var bottom = new.removeLast()
    bottom.revision += 1
    new.insert(bottom, at: 0)
    return (old, new)
}

func moveCount(_ result: ListDiffResult<Row>) -> Int { result.structural?.moves.count ?? 0 }

/// The fewest moves any valid batch needs: common rows minus a longest increasing subsequence.
func minimumMoves(old: [Row], new: [Row]) -> Int {
    let newRank = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($0.element.id, $0.offset) })
    let positions = old.compactMap { newRank[$0.id] }
    // Patience sorting: the length of a longest increasing subsequence.
    var tails: [Int] = []
    for position in positions {
        var low = 0
        var high = tails.count
        while low < high {
            let mid = (low + high) / 2
            if tails[mid] < position { low = mid + 1 } else { high = mid }
        }
        if low == tails.count { tails.append(position) } else { tails[low] = position }
    }
    return positions.count - tails.count
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal], timeUnits: .microseconds, maxDuration: .seconds(5))

    for count in [10_000, 100_000] {
        let mixed = mixedPair(count: count)
        let moves = try! moveCount(ListDiffer.diff(from: mixed.old, to: mixed.new))
        let fewest = minimumMoves(old: mixed.old, new: mixed.new)
        precondition(moves == fewest, "ListDiff made \(moves) moves where \(fewest) suffice")
        Benchmark("ListDiff blind diff, \(count) rows, 10% mixed (\(moves) moves; fewest possible \(fewest))") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try ListDiffer.diff(from: mixed.old, to: mixed.new))
            }
        }
        let bump = bumpPair(count: count)
        Benchmark("ListDiff blind diff, \(count) rows, bottom row to top and changed") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try ListDiffer.diff(from: bump.old, to: bump.new))
            }
        }
        // The baseline for a small edit: the standard library on the bumped ids, in the same process.
        let bumpOldIDs = bump.old.map(\.id)
        let bumpNewIDs = bump.new.map(\.id)
        Benchmark("stdlib difference(from:).inferringMoves(), \(count) rows, bottom row to top") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(bumpNewIDs.difference(from: bumpOldIDs).inferringMoves())
            }
        }
        // The baseline: the standard library's diff with inferred moves, on the same ids.
        let oldIDs = mixed.old.map(\.id)
        let newIDs = mixed.new.map(\.id)
        let stdlibMoves = count > 10_000 ? -1 : newIDs.difference(from: oldIDs).inferringMoves().reduce(0) {
            if case .insert(_, _, .some) = $1 { return $0 + 1 } else { return $0 }
        }
        Benchmark(
            "stdlib difference(from:).inferringMoves(), \(count) rows, 10% mixed (\(stdlibMoves < 0 ? "?" : String(stdlibMoves)) moves)",
            configuration: .init(maxDuration: .seconds(count > 10_000 ? 1 : 5), maxIterations: count > 10_000 ? 1 : 20)
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(newIDs.difference(from: oldIDs).inferringMoves())
            }
        }
    }
}

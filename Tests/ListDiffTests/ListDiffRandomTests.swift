import ListDiff
import Testing
import TestSupport

@Suite("Random list pairs (fixed seeds)")
struct ListDiffRandomTests {
    @Test("thousands of pairs up to a few thousand rows are valid", arguments: [1, 2, 3, 4])
    func randomPairsAreValid(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        for round in 0..<500 {
            let count = round % 50 == 0 ? Int.random(in: 1000...3000, using: &generator) : Int.random(in: 0...200, using: &generator)
            let fraction = [0.0, 0.01, 0.1, 0.3, 0.9].randomElement(using: &generator)!
            let (old, new) = RandomLists.pair(count: count, fraction: fraction, using: &generator)
            let result = try ListDiffer.diff(from: old, to: new)
            try #require(ReferenceDiff.problem(with: result, old: old, new: new) == nil, "seed \(seed) round \(round)")
        }
    }

    @Test("random pairs keep the optimal rows in place", arguments: [11, 12])
    func randomPairsAreOptimal(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        for round in 0..<150 {
            let count = Int.random(in: 0...120, using: &generator)
            let (old, new) = RandomLists.pair(count: count, fraction: 0.2, using: &generator)
            let result = try ListDiffer.diff(from: old, to: new)
            try #require(
                ReferenceDiff.stayWeight(of: result, old: old, new: new)
                    == ReferenceDiff.optimalWeight(old: old, new: new), "seed \(seed) round \(round)")
        }
    }

    @Test("random keyed lists: only changed keys move, optimally", arguments: [21, 22, 23])
    func randomChangedKeys(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        for round in 0..<300 {
            let count = Int.random(in: 0...(round % 30 == 0 ? 2000 : 80), using: &generator)
            var keys = (0..<count).map { _ in Int.random(in: 0..<(count + 1), using: &generator) }
            let old = sortedByKey(keys)
            var changed = Set<Int>()
            for id in 0..<count where Int.random(in: 0..<10, using: &generator) == 0 {
                keys[id] = Int.random(in: 0..<(count + 1), using: &generator)
                changed.insert(id)
            }
            var new = sortedByKey(keys).filter { _ in Int.random(in: 0..<20, using: &generator) != 0 }
            new.append(TestItem(id: count + 1, revision: -1))
            let result = try ListDiffer.diff(from: old, to: new, orderKeyChanged: changed)
            try #require(ReferenceDiff.problem(with: result, old: old, new: new) == nil, "seed \(seed) round \(round)")
            let moved = Set((result.structural?.moves ?? []).map { old[$0.from].id })
            try #require(moved.isSubset(of: changed))
            if count <= 80 {
                try #require(
                    ReferenceDiff.stayWeight(of: result, old: old, new: new)
                        == ReferenceDiff.optimalWeight(old: old, new: new, mayMove: changed), "seed \(seed) round \(round)")
            }
        }
    }

    /// Items sorted by key then id; the revision is the key, so a key change is also an update.
    private func sortedByKey(_ keys: [Int]) -> [TestItem] {
        keys.enumerated().sorted { ($0.element, $0.offset) < ($1.element, $1.offset) }
            .map { TestItem(id: $0.offset, revision: $0.element) }
    }
}

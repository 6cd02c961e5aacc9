"""The package graph read from the source: which room each module belongs to, what each room's docstring says
it may import, every import of ours (module level and inside functions), and the import circles among modules.
Used by tests/test_layers.py and printable as text (`python -m tests.layers`) for review."""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOPS = ("supervisor", "hpc", "tui")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_of(module: str, root: Path = ROOT) -> str:
    """supervisor.run.paths -> run; supervisor.gitops -> gitops; hpc.chain -> hpc; tui.app -> tui."""
    parts = module.split(".")
    if parts[0] != "supervisor":
        return parts[0]
    return (parts[1].lstrip("_") if parts[1] == "_version" else parts[1]) if len(parts) > 1 else "supervisor"


def room_docstring_file(room: str, root: Path = ROOT) -> Path:
    if room in ("hpc", "tui", "supervisor"):
        return root / room / "__init__.py"
    package = root / "supervisor" / room / "__init__.py"
    return package if package.exists() else root / "supervisor" / f"{room}.py"


def allowed_imports(room: str, root: Path = ROOT) -> set[str] | None:
    """The rooms named on the 'May import:' line of the room's docstring (None: no such line)."""
    doc = ast.get_docstring(ast.parse(room_docstring_file(room, root).read_text())) or ""
    match = re.search(r"May import:\s*([^\n]*(?:\n(?!\s*\n)[^\n]*)*)", doc)
    if not match:
        return None
    text = match.group(1).strip().rstrip(".")
    if text.startswith("nothing"):
        return set()
    return {name.strip() for name in re.split(r"[,\s]+", text) if name.strip()}


GENERATED = ("_version.py",)  # setuptools-scm's, written at install into supervisor/ (part of the version room)


def python_files(root: Path = ROOT) -> list[Path]:
    return sorted(p for top in TOPS for p in (root / top).rglob("*.py") if p.name not in GENERATED)


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports_of(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, imported module of ours) for every import in the file, lazy ones included."""
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    me = module_name(path, root)
    found = []
    for node in ast.walk(tree):
        if _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                package = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            for alias in node.names:  # `from supervisor import gitops` names a module
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if _is_module(sub, root) else base))
    # what is installed is one package, nightshift (pyproject.toml); a room is named by its folder
    found = [(line, name.removeprefix("nightshift.")) for line, name in found]
    return [(line, name) for line, name in found if name.split(".")[0] in TOPS]


def _is_module(name: str, root: Path) -> bool:
    path = root.joinpath(*name.removeprefix("nightshift.").split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def violations(root: Path = ROOT) -> list[str]:
    """Every import that runs against its room's docstring, as 'file:line: room imports X (allowed: ...)'."""
    out, rules = [], {}
    for path in python_files(root):
        room = room_of(module_name(path, root), root)
        if room not in rules:
            rules[room] = allowed_imports(room, root)
        if rules[room] is None:
            out.append(f"{room_docstring_file(room, root).relative_to(root)}: room {room!r} has no 'May import:' "
                       "line in its docstring")
            rules[room] = set()
        for line, target in imports_of(path, root):
            other = room_of(target, root)
            if other != room and other not in rules[room]:
                allowed = ", ".join(sorted(rules[room])) or "nothing"
                out.append(f"{path.relative_to(root)}:{line}: {room} imports {target} (room {other!r}); "
                           f"{room} may import: {allowed}")
    return sorted(set(out))


def face_group_of(module: str) -> str | None:
    """supervisor.cli.report.data -> "cli.report"; a module beside main.py, or outside the face: None."""
    parts = module.split(".")
    return f"cli.{parts[2]}" if parts[:2] == ["supervisor", "cli"] and len(parts) > 3 else None


def face_target(module: str) -> str:
    """What a face group's rule names: a room, a group ("cli.init") or a module beside main.py ("cli.doctor")."""
    parts = module.split(".")
    if parts[:2] == ["supervisor", "cli"] and len(parts) > 2:
        return f"cli.{parts[2]}"
    return room_of(module)


def face_violations(root: Path = ROOT) -> list[str]:
    """The face's groups (cli/init/, cli/report/, ...) hold to their own docstrings' 'May import:' lines too."""
    out = []
    for path in sorted((root / "supervisor" / "cli").glob("*/*.py")):
        group = face_group_of(module_name(path, root))
        doc = ast.get_docstring(ast.parse((path.parent / "__init__.py").read_text())) or ""
        match = re.search(r"May import:\s*([^\n]*(?:\n(?!\s*\n)[^\n]*)*)", doc)
        if not match:
            out.append(f"{path.parent.relative_to(root)}/__init__.py: group {group!r} has no 'May import:' line")
            continue
        allowed = {n.strip() for n in re.split(r"[,\s]+", match.group(1).strip().rstrip(".")) if n.strip()}
        for line, target in imports_of(path, root):
            named = face_target(target)
            if named != group and named not in allowed:
                out.append(f"{path.relative_to(root)}:{line}: {group} imports {target} ({named!r}); {group} may "
                           f"import: {', '.join(sorted(allowed))}")
    return out


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in python_files(root):
        me = module_name(path, root)
        graph[me]
        for _, target in imports_of(path, root):
            if target != me and not me.startswith(target + "."):  # a module importing its own package's init
                graph[me].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in list(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter[0]; counter[0] += 1
        stack.append(start); on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]; counter[0] += 1
                    stack.append(child); on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop(); on_stack.discard(member); component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def room_graph(root: Path = ROOT) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = defaultdict(set)
    for module, targets in module_graph(root).items():
        mine = room_of(module, root)
        rooms[mine] |= {room_of(t, root) for t in targets} - {mine}
    return rooms


if __name__ == "__main__":
    for room, targets in sorted(room_graph().items()):
        print(f"{room:10} -> {', '.join(sorted(targets)) or '-'}")
    print("\n".join(violations()) or "no violations")
    print("\n".join(" <-> ".join(c) for c in circles(module_graph())) or "no circles")

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import Project, copy_tree, make_template


@pytest.fixture(scope="session")
def template_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory.mktemp("template") / "repo")


@pytest.fixture
def repo(template_repo: Path, tmp_path: Path) -> Path:
    return copy_tree(template_repo, tmp_path / "project")


@pytest.fixture
def project(repo: Path) -> Project:
    """coder and cleaner in task mode, qa in batch mode, each in its own worktree."""
    return Project(repo, {"coder": "task", "cleaner": "task", "qa": "batch"})

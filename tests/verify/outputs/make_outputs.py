"""Regenerate the captured tool outputs in this folder by running the real tools on small projects.

The test-count tests run pytest, unittest and cargo live; Go, Jest and Maven are slow to start or
not installed everywhere, so their real outputs are captured here. Run by hand where the tools
exist (Go >= 1.19, Node with `npm`, Maven with surefire and JUnit 5 in its local repository):

    python tests/verify/outputs/make_outputs.py

Each project is written to a temporary directory, in a `before` state (a failing test, the bug
unfixed) and `after` states (the bug fixed, with or without a test lost), and each run's combined
stdout and stderr is written to `<tool>_<state>.txt` beside this file, the temporary directory's
path replaced by `<tmp>`. Nothing is downloaded
except Jest and Vitest from the npm registry (`npm install`); Go and Maven run offline.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run(argv: list[str], cwd: Path, env: dict[str, str], out: str) -> None:
    done = subprocess.run(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False
    )
    # the temporary directory's name is this machine's: it is written as <tmp>
    (HERE / out).write_bytes(done.stdout.replace(str(cwd.parent).encode(), b"<tmp>"))
    print(f"{out}: exit {done.returncode}", file=sys.stderr)


GO_CALC = (
    "package calc\n\nfunc Add(a, b int) int { return a %s b }\n\nfunc Sub(a, b int) int { return a - b }\n"
)
GO_CALC_TEST = """package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatalf("Add(2, 3) = %d", Add(2, 3))
	}
}
{SUB}
func TestSlow(t *testing.T) {
	t.Skip("slow")
}

func TestTable(t *testing.T) {
	for _, name := range []string{"one", "two"} {
		t.Run(name, func(t *testing.T) {})
	}
}
"""
GO_SUB_TEST = """
func TestSub(t *testing.T) {
	if Sub(3, 1) != 2 {
		t.Fatal("Sub")
	}
}
"""
GO_STR_TEST = 'package str\n\nimport "testing"\n\nfunc TestUpper(t *testing.T) {}\n'


def go(work: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(work),
        "GOPATH": str(work / "gopath"),
        "GOCACHE": str(work / "gocache"),
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "GOTELEMETRY": "off",
    }
    project = work / "go"
    base = {
        "go.mod": "module example.com/proj\n\ngo 1.19\n",
        "main.go": "package main\n\nfunc main() {}\n",
        "str/str.go": "package str\n",
        "str/str_test.go": GO_STR_TEST,
    }
    write(
        project,
        {
            **base,
            "calc/calc.go": GO_CALC % "*",
            "calc/calc_test.go": GO_CALC_TEST.replace("{SUB}", GO_SUB_TEST),
        },
    )
    run(["go", "test", "-count=1", "-v", "./..."], project, env, "go_v_before.txt")
    run(["go", "test", "-count=1", "./..."], project, env, "go_plain_before.txt")
    run(["go", "test", "-count=1", "-json", "./..."], project, env, "go_json_before.txt")
    write(project, {"calc/calc.go": GO_CALC % "+"})
    run(["go", "test", "-count=1", "-v", "./..."], project, env, "go_v_after.txt")
    run(["go", "test", "-count=1", "./..."], project, env, "go_plain_after.txt")
    write(project, {"calc/calc_test.go": GO_CALC_TEST.replace("{SUB}", "")})
    run(["go", "test", "-count=1", "-v", "./..."], project, env, "go_v_after_removed.txt")
    run(["go", "test", "-count=1", "-json", "./..."], project, env, "go_json_after_removed.txt")


JEST_SUM = """const { add, sub } = require('./sum');

describe('math', () => {
  test('adds', () => {
    expect(add(1, 2)).toBe(3);
  });
  {TEST}('subtracts', () => {
    expect(sub(3, 1)).toBe(2);
  });
  describe('nested', () => {
    test('multiplies later', () => {});
  });
  test.skip('divides', () => {});
  test.todo('rounds');
});
"""
JEST_OTHER = "test('other works', () => {\n  expect(1).toBe(1);\n});\n"


def jest(work: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "CI": "true", "NO_COLOR": "1"}
    project = work / "jest"
    write(
        project,
        {
            "package.json": '{"name": "proj", "version": "1.0.0", "private": true}\n',
            "sum.js": "exports.add = (a, b) => a * b;\nexports.sub = (a, b) => a - b;\n",
            "sum.test.js": JEST_SUM.replace("{TEST}", "test"),
            "other.test.js": JEST_OTHER,
        },
    )
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "-D", "jest@30"], cwd=project, env=env, check=True
    )
    jest_bin = str(project / "node_modules" / ".bin" / "jest")
    run([jest_bin, "--verbose"], project, env, "jest_verbose_before.txt")
    run([jest_bin], project, env, "jest_plain_before.txt")
    write(project, {"sum.js": "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a - b;\n"})
    run([jest_bin, "--verbose"], project, env, "jest_verbose_after.txt")
    write(project, {"sum.test.js": JEST_SUM.replace("{TEST}", "test.skip")})
    run([jest_bin, "--verbose"], project, env, "jest_verbose_after_skip.txt")


def vitest(work: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "CI": "true", "NO_COLOR": "1"}
    project = work / "vitest"
    test = JEST_SUM.replace("{TEST}", "test").replace(
        "const { add, sub } = require('./sum');", "import { add, sub } from './sum.js';"
    )
    write(
        project,
        {
            "package.json": '{"name": "proj", "version": "1.0.0", "private": true, "type": "module"}\n',
            "sum.js": "export const add = (a, b) => a * b;\nexport const sub = (a, b) => a - b;\n",
            "sum.test.js": "import { describe, test, expect } from 'vitest';\n" + test,
            "other.test.js": "import { test, expect } from 'vitest';\n" + JEST_OTHER,
        },
    )
    install = ["npm", "install", "--no-audit", "--no-fund", "-D", "-E", "vite@8.3.8", "vitest@4.1.12"]
    subprocess.run(install, cwd=project, env=env, check=True)
    vitest_bin = str(project / "node_modules" / ".bin" / "vitest")
    run([vitest_bin, "run"], project, env, "vitest_before.txt")


MAVEN_PARENT = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>parent</artifactId>
  <version>1.0</version>
  <packaging>pom</packaging>
  <modules><module>core</module><module>util</module></modules>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>5.10.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.11.0</version></plugin>
      <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
    </plugins>
  </build>
</project>
"""
MAVEN_MODULE = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>example</groupId><artifactId>parent</artifactId><version>1.0</version></parent>
  <artifactId>%s</artifactId>
</project>
"""
MAVEN_CALC = (
    "package example;\n\npublic class Calc {\n  public static int add(int a, int b) { return a %s b; }\n}\n"
)
MAVEN_CALC_TEST = """package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

class CalcTest {
  @Test
  void adds() { assertEquals(5, Calc.add(2, 3)); }

  @Test
  {EXTRA}
  void addsZero() { assertEquals(2, Calc.add(2, 0)); }

  @Test
  @Disabled("slow")
  void addsMany() {}
}
"""
MAVEN_OTHER_TEST = """package example;

import org.junit.jupiter.api.Test;

class TextTest {
  @Test
  void one() {}

  @Test
  void two() {}
}
"""


def maven(work: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "MAVEN_OPTS": "-Djansi.force=false"}
    project = work / "maven"
    write(
        project,
        {
            "pom.xml": MAVEN_PARENT,
            "core/pom.xml": MAVEN_MODULE % "core",
            "core/src/main/java/example/Calc.java": MAVEN_CALC % "*",
            "core/src/test/java/example/CalcTest.java": MAVEN_CALC_TEST.replace("{EXTRA}", ""),
            "util/pom.xml": MAVEN_MODULE % "util",
            "util/src/test/java/example/TextTest.java": MAVEN_OTHER_TEST,
        },
    )
    argv = ["mvn", "-o", "-B", "--fail-at-end", "test"]
    run(argv, project, env, "maven_before.txt")
    write(project, {"core/src/main/java/example/Calc.java": MAVEN_CALC % "+"})
    run(argv, project, env, "maven_after.txt")
    write(
        project,
        {
            "core/src/test/java/example/CalcTest.java": MAVEN_CALC_TEST.replace(
                "{EXTRA}", '@Disabled("flaky")'
            )
        },
    )
    run(argv, project, env, "maven_after_skip.txt")


def main() -> None:
    wanted = sys.argv[1:] or ["go", "jest", "vitest", "maven"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in wanted:
            if shutil.which({"jest": "npm", "vitest": "npm", "maven": "mvn"}.get(name, name)) is None:
                print(f"{name}: the tool is not installed here; skipped", file=sys.stderr)
                continue
            {"go": go, "jest": jest, "vitest": vitest, "maven": maven}[name](work)


if __name__ == "__main__":
    main()

"""Regenerate the captured tool outputs in this folder by running the real tools on small projects.

The test-count tests run pytest, unittest and cargo live; Go, Jest, Maven, Mocha, RSpec, minitest,
PHPUnit and Gradle are slow to start or not installed everywhere, so their real outputs are captured
here. Run by hand where the tools exist (Go >= 1.19, Node with `npm`, Maven with surefire and JUnit 5
in its local repository; Debian's `ruby ruby-rspec phpunit gradle junit4` for the rest):

    python tests/ladder/outputs/make_outputs.py

Each project is written to a temporary directory, in a `before` state (a failing test, the bug
unfixed) and `after` states (the bug fixed, with or without a test lost), and each run's combined
stdout and stderr is written to `<tool>_<state>.txt` beside this file, the temporary directory's
path replaced by `<tmp>`. Nothing is downloaded
except Jest, Vitest and Mocha from the npm registry (`npm install`); Go, Maven and Gradle run offline.
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


MOCHA_TEST = """const assert = require('assert');
const { add, sub } = require('../sum');

describe('math', function () {
  it('adds', function () {
    assert.strictEqual(add(1, 2), 3);
  });
  {IT}('subtracts', function () {
    assert.strictEqual(sub(3, 1), 2);
  });
  it.skip('divides', function () {});
  it('multiplies later');
});
"""


def mocha(work: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "CI": "true", "NO_COLOR": "1"}
    project = work / "mocha"
    write(
        project,
        {
            "package.json": '{"name": "proj", "version": "1.0.0", "private": true}\n',
            "sum.js": "exports.add = (a, b) => a * b;\nexports.sub = (a, b) => a - b;\n",
            "test/sum.test.js": MOCHA_TEST.replace("{IT}", "it"),
        },
    )
    install = ["npm", "install", "--no-audit", "--no-fund", "-D", "-E", "mocha@12.0.3"]
    subprocess.run(install, cwd=project, env=env, check=True)
    mocha_bin = str(project / "node_modules" / ".bin" / "mocha")
    run([mocha_bin], project, env, "mocha_before.txt")
    write(project, {"sum.js": "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a - b;\n"})
    run([mocha_bin], project, env, "mocha_after.txt")
    write(project, {"test/sum.test.js": MOCHA_TEST.replace("{IT}", "it.skip")})
    run([mocha_bin], project, env, "mocha_after_skip.txt")


RUBY_SLUG = "module Slug\n  def self.of(text)\n    text.strip%s\n  end\nend\n"
RSPEC_SPEC = """require_relative "../lib/slug"

RSpec.describe Slug do
  it "trims" do
    expect(Slug.of("  a ")).to eq("a")
  end

  {IT} "lowers and dashes" do
    expect(Slug.of("Hello World")).to eq("hello-world")
  end

  it "keeps dashes" do
    expect(Slug.of("a-b")).to eq("a-b")
  end

  it "is pending", skip: "not yet" do
  end
end
"""
MINITEST_TEST = """require "minitest/autorun"
require_relative "../lib/slug"

class SlugTest < Minitest::Test
  def test_trims
    assert_equal "a", Slug.of("  a ")
  end
{LOWERS}
  def test_keeps_dashes
    assert_equal "a-b", Slug.of("a-b")
  end

  def test_later
    skip "not yet"
  end
end
"""
MINITEST_LOWERS = """
  def test_lowers_and_dashes
    assert_equal "hello-world", Slug.of("Hello World")
  end
"""
RUBY_FIX = '.downcase.tr(" ", "-")'


def rspec(work: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(work)}
    project = work / "rspec"
    write(project, {"lib/slug.rb": RUBY_SLUG % "", "spec/slug_spec.rb": RSPEC_SPEC.replace("{IT}", "it")})
    run(["rspec", "--no-color"], project, env, "rspec_before.txt")
    write(project, {"lib/slug.rb": RUBY_SLUG % RUBY_FIX})
    run(["rspec", "--no-color"], project, env, "rspec_after.txt")
    write(project, {"spec/slug_spec.rb": RSPEC_SPEC.replace("{IT}", "xit")})
    run(["rspec", "--no-color"], project, env, "rspec_after_skip.txt")
    missing = RSPEC_SPEC.replace("{IT}", "it").replace(
        "\n\nRSpec", '\nrequire_relative "../lib/missing"\n\nRSpec', 1
    )
    write(project, {"spec/slug_spec.rb": missing})
    run(["rspec", "--no-color"], project, env, "rspec_load_error.txt")


def minitest(work: Path) -> None:
    # MT_NO_PLUGINS: minitest's own reporter, even where railties (whose plugin it would load) is installed
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "MT_NO_PLUGINS": "1"}
    project = work / "minitest"
    test = MINITEST_TEST.replace("{LOWERS}", MINITEST_LOWERS)
    write(project, {"lib/slug.rb": RUBY_SLUG % "", "test/slug_test.rb": test})
    argv = ["ruby", "-Ilib", "test/slug_test.rb", "--seed", "1234"]
    run(argv, project, env, "minitest_before.txt")
    write(project, {"lib/slug.rb": RUBY_SLUG % RUBY_FIX})
    run(argv, project, env, "minitest_after.txt")
    write(project, {"test/slug_test.rb": MINITEST_TEST.replace("{LOWERS}", "")})
    run(argv, project, env, "minitest_after_removed.txt")


PHP_SLUG = "<?php\nnamespace Demo;\n\nfinal class Slug\n{\n    public static function of(string $t): string\n    {\n        return %s;\n    }\n}\n"
PHP_TEST = """<?php
namespace Demo\\Tests;

use Demo\\Slug;
use PHPUnit\\Framework\\TestCase;

final class SlugTest extends TestCase
{
    public function testTrims(): void
    {
        $this->assertSame('a', Slug::of('  a '));
    }
{LOWERS}
    public function testKeepsDashes(): void
    {
        $this->assertSame('a-b', Slug::of('a-b'));
    }
{LATER}}
"""
PHP_LOWERS = """
    public function testLowersAndDashes(): void
    {
        $this->assertSame('hello-world', Slug::of('Hello World'));
    }
"""
PHP_LATER = """
    public function testLater(): void
    {
        $this->markTestSkipped('not yet');
    }
"""


def phpunit(work: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(work)}
    project = work / "phpunit"
    test = PHP_TEST.replace("{LOWERS}", PHP_LOWERS).replace("{LATER}", PHP_LATER)
    write(
        project,
        {
            "src/Slug.php": PHP_SLUG % "trim($t)",
            "tests/bootstrap.php": "<?php\nrequire __DIR__ . '/../src/Slug.php';\n",
            "tests/SlugTest.php": test,
        },
    )
    argv = ["phpunit", "--bootstrap", "tests/bootstrap.php", "--colors=never", "tests"]
    run(argv, project, env, "phpunit_before.txt")
    write(project, {"src/Slug.php": PHP_SLUG % "str_replace(' ', '-', strtolower(trim($t)))"})
    run(argv, project, env, "phpunit_after.txt")
    write(project, {"tests/SlugTest.php": PHP_TEST.replace("{LOWERS}", "").replace("{LATER}", "")})
    run(argv, project, env, "phpunit_after_removed.txt")


GRADLE_BUILD = """apply plugin: 'java'
dependencies {
    testCompile files('/usr/share/java/junit4.jar', '/usr/share/java/hamcrest-core.jar')
}
"""
GRADLE_CALC = (
    "package example;\n\npublic class Calc {\n  public static int add(int a, int b) { return a %s b; }\n}\n"
)
GRADLE_TEST = """package example;

import static org.junit.Assert.assertEquals;

import org.junit.Ignore;
import org.junit.Test;

public class CalcTest {
  @Test
  public void adds() { assertEquals(5, Calc.add(2, 3)); }
{ZERO}
  @Test
  @Ignore("slow")
  public void addsMany() {}
}
"""
GRADLE_ZERO = """
  @Test
  public void addsZero() { assertEquals(2, Calc.add(2, 0)); }
"""


def gradle(work: Path) -> None:
    """Debian's Gradle 4.4 and JUnit 4 (`junit4`), offline; the JUnit XML reports are kept too."""
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "GRADLE_USER_HOME": str(work / "gradle-home")}
    project = work / "gradle"
    write(
        project,
        {
            "build.gradle": GRADLE_BUILD,
            "settings.gradle": "rootProject.name = 'calc'\n",
            "src/main/java/example/Calc.java": GRADLE_CALC % "*",
            "src/test/java/example/CalcTest.java": GRADLE_TEST.replace("{ZERO}", GRADLE_ZERO),
        },
    )
    argv = ["gradle", "--offline", "--console=plain", "test"]
    report = project / "build" / "test-results" / "test" / "TEST-example.CalcTest.xml"
    for state, files in (
        ("before", {}),
        ("after", {"src/main/java/example/Calc.java": GRADLE_CALC % "+"}),
        ("after_removed", {"src/test/java/example/CalcTest.java": GRADLE_TEST.replace("{ZERO}", "")}),
    ):
        write(project, files)
        run(argv, project, env, f"gradle_{state}.txt")
        shutil.copyfile(report, HERE / f"gradle_{state}_TEST-example.CalcTest.xml")
    # the runs started a Gradle daemon for this GRADLE_USER_HOME: stop it
    subprocess.run(["gradle", "--stop"], cwd=project, env=env, stdout=subprocess.DEVNULL, check=False)


def main() -> None:
    makers = {
        "go": go,
        "jest": jest,
        "vitest": vitest,
        "maven": maven,
        "mocha": mocha,
        "rspec": rspec,
        "minitest": minitest,
        "phpunit": phpunit,
        "gradle": gradle,
    }
    needs = {"jest": "npm", "vitest": "npm", "maven": "mvn", "mocha": "npm", "minitest": "ruby"}
    wanted = sys.argv[1:] or list(makers)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in wanted:
            if shutil.which(needs.get(name, name)) is None:
                print(f"{name}: the tool is not installed here; skipped", file=sys.stderr)
                continue
            makers[name](work)


if __name__ == "__main__":
    main()

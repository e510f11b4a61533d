using System;
class A { int x; }
